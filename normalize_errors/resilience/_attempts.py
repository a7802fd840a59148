"""Every attempt of a run of retries and fallbacks: an entry on the final error, and a span.

When every attempt of ``retrying()``, ``fallback()`` or a ``FallbackPlan`` failed, the error
raised carries ``attempt_log`` (an extension member, as RFC 9457 allows; in ``to_dict()`` and
``err.problem.extensions``): one entry per attempt, oldest first, each with

* ``code`` (the harness code), ``provider`` and ``status`` (the HTTP status) when known;
* ``seconds`` the attempt took, and ``output_reached``: whether part of its output already
  reached the caller (what a stream delivered: ``err.stream``);
* ``sent``: false when no request left (a circuit breaker refused it, ``breaker`` naming it,
  or the connection could not be made);
* ``target``: the fallback's target (its position in ``fallback()``, its name in a plan).

Helpers nest (a fallback over ``retrying()``): the outer one takes the inner one's entries
instead of one of its own, so the outermost error lists every request of the run. At most
``MAX_ENTRIES`` are kept: the first, and the most recent.

When ``opentelemetry`` is in use and the current span is recording, each attempt is a child
span of it (``bindings.otel.attempt_span``), its failure recorded with ``record_error``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from .._model._dropin import copy_dropin
from .._model._exceptions import HarnessError
from ._common import delivered, harness, refused_by_breaker, request_phase

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["LOG_MEMBER", "MAX_ENTRIES", "Tracker", "log_of"]

LOG_MEMBER: Final = "attempt_log"
"""The extension member of the final error that lists the run's attempts."""
MAX_ENTRIES: Final = 64


def log_of(err: HarnessError) -> list[dict[str, Any]] | None:
    """The attempt log a helper put on ``err`` (none on an error received from another
    party: its log is not this run's)."""
    problem = err.problem
    log = problem.extensions.get(LOG_MEMBER)
    if problem.untrusted or not isinstance(log, list):
        return None
    return [entry for entry in log if isinstance(entry, dict)]


def _entry(err: HarnessError, seconds: float, target: str | int | None) -> dict[str, Any]:
    problem = err.problem
    upstream = problem.upstream
    entry: dict[str, Any] = {}
    if target is not None:
        entry["target"] = target
    refused = refused_by_breaker(problem)
    provider = upstream.get("provider")
    if isinstance(provider, str) and not refused:
        entry["provider"] = provider
    entry["code"] = problem.code
    status = upstream.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        entry["status"] = status
    entry["seconds"] = round(max(seconds, 0.0), 3)
    entry["output_reached"] = delivered(err)
    entry["sent"] = not refused and request_phase(err) != "before_send"
    if refused:
        for name in ("breaker", "ledger"):
            if name in upstream:
                entry[name] = upstream[name]
    return entry


def _tracing() -> bool:
    """Whether OpenTelemetry is in use here and the current span records (never imports it)."""
    trace = sys.modules.get("opentelemetry.trace")
    return trace is not None and bool(trace.get_current_span().is_recording())


class Step:
    """One attempt while it runs: its start, its target and its span (if any)."""

    __slots__ = ("span", "started", "target", "tracker")

    def __init__(self, tracker: Tracker, target: str | int | None) -> None:
        self.tracker = tracker
        self.target = target
        self.started = time.monotonic()
        self.span: Span | None = None

    def failed(self, exc: BaseException) -> None:
        """Note the attempt's failure: its entries in the log, its error on its span."""
        err = harness(exc)
        entries = self.tracker.entries
        inner = log_of(err)
        if inner:  # a nested helper's attempts: each is a request of this run
            for entry in inner:
                entries.append({"target": self.target, **entry} if self.target else entry)
        else:
            entries.append(_entry(err, time.monotonic() - self.started, self.target))
        if self.span is not None:
            from ..bindings.otel import record_error

            last = entries[-1]
            self.span.set_attribute("harness.attempt.sent", bool(last.get("sent")))
            self.span.set_attribute(
                "harness.attempt.output_reached", bool(last.get("output_reached"))
            )
            record_error(self.span, err)


class Tracker:
    """The attempts of one call of a helper (``helper``: ``retry``, ``fallback``)."""

    __slots__ = ("entries", "helper", "number")

    def __init__(self, helper: str) -> None:
        self.helper = helper
        self.number = 0
        self.entries: list[dict[str, Any]] = []

    @contextmanager
    def attempt(self, target: str | int | None = None) -> Iterator[Step]:
        """One attempt: a ``Step`` to tell of its failure; a span around it when tracing."""
        self.number += 1
        step = Step(self, target)
        if not _tracing():
            yield step
            return
        from ..bindings.otel import attempt_span

        with attempt_span(self.helper, self.number, target) as span:
            step.span = span
            yield step

    def logged(self, err: HarnessError) -> HarnessError:
        """A copy of ``err`` (a drop-in stays a drop-in, its chain kept) whose
        ``attempt_log`` lists this run's attempts."""
        entries = self.entries
        if len(entries) > MAX_ENTRIES:
            entries = [entries[0], *entries[-(MAX_ENTRIES - 1) :]]
        if err.problem is not err:
            top = copy_dropin(err)
        else:
            top = err._clone()
            top.__cause__ = err.__cause__
            top.__context__ = err.__context__
            top.__suppress_context__ = err.__suppress_context__
            top.__traceback__ = err.__traceback__
        problem = top.problem
        problem._extensions = {**problem._extensions, LOG_MEMBER: [dict(e) for e in entries]}
        return top
