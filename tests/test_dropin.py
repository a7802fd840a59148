"""Drop-ins are invisible to vendor code: the vendor's members keep the vendor's meaning.

For every failure of the shipped cassettes (replayed through the real clients) and for every
exception class the SDKs export, the drop-in is compared with the raw vendor exception of the
same response: every member the vendor defines must read the same (``code``, ``type``,
``status``, ``message``, ``body``, ``response``, ...). The harness view (``err.problem``,
the other harness members, ``to_dict()``) is compared with the plain harness error.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from normalize_errors import (
    HarnessError,
    UpstreamInvalidRequestError,
    UpstreamRateLimitedError,
    class_for_code,
    normalize,
    normalized,
    redact,
    wrap,
)
from normalize_errors._model._dropin import VENDOR_NAMES, dropin_class, make_dropin
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors._wrapping._wrap import typed_error
from normalize_errors.replay import cassette_paths, load, run, shipped

from .support import is_instance, needed, recorded

MISSING = object()
HARNESS_ONLY = ("problem", "to_dict", "to_json")
"""What a drop-in keeps for the harness whatever the vendor defines."""


def vendor_members(vendor: type[BaseException], raw: BaseException | None) -> set[str]:
    """The public members the vendor defines: its classes' names and annotations (not those
    of the built-in exceptions), and the attributes its ``__init__`` set on ``raw``."""
    names: set[str] = set()
    for klass in vendor.__mro__:
        if klass.__module__ != "builtins":
            names.update(vars(klass))
            names.update(inspect.get_annotations(klass))
    if raw is not None:
        names.update(vars(raw))
    return {n for n in names if not n.startswith("_")} - set(HARNESS_ONLY)


def harness_members() -> set[str]:
    """The public members of a harness error (attributes, properties, methods)."""
    probe = UpstreamRateLimitedError("probe")
    names = {n for n in dir(probe) if not n.startswith("_")}
    return names - set(dir(Exception))


HARNESS = harness_members()


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wall read from a response without a ``Date`` header is measured from this machine's
    clock (``err.quota.resets_in``): fixed here, so the drop-in's reading of a failure and
    ``normalize()``'s, made a moment apart, agree to the millisecond."""
    from normalize_errors._base import _calendar

    now = time.time()
    monkeypatch.setattr(_calendar, "time", SimpleNamespace(time=lambda: now, gmtime=time.gmtime))


def read(obj: object, name: str) -> Any:
    """``obj.name`` as a program sees it, or ``MISSING``; a method reads as its function."""
    try:
        value = getattr(obj, name)
    except Exception as exc:  # a vendor property may raise: compare what it raises
        return ("raises", type(exc))
    if inspect.ismethod(value):
        return value.__func__
    return value


def assert_vendor_view(err: HarnessError, raw: BaseException) -> list[str]:
    """Every member the vendor defines reads on ``err`` as on ``raw``; returns the clashes."""
    vendor = type(raw)
    assert isinstance(err, vendor)
    assert err.problem.__cause__ is raw  # the vendor exception
    assert err.__cause__ is raw.__cause__  # its own chain, as the vendor raised it
    assert err.__suppress_context__ == raw.__suppress_context__
    members = vendor_members(vendor, raw)
    for name in sorted(members):
        assert read(err, name) == read(raw, name), name
    assert str(err) == redact(str(raw))
    assert err.args == tuple(redact(a) if isinstance(a, str) else a for a in raw.args)
    return sorted(members & HARNESS)


def assert_harness_view(err: HarnessError, raw: BaseException) -> None:
    """``err.problem`` is the plain harness error of ``raw``; other members read from it."""
    plain = normalize(raw)
    problem = err.problem
    assert not isinstance(problem, type(raw))
    assert type(problem) is type(plain)
    assert problem.problem is problem
    assert normalize(err) is problem
    ours, theirs = problem.to_dict(), plain.to_dict()
    ours.pop("max_attempts", None)  # wrap() knows the client's retries; normalize() does not
    theirs.pop("max_attempts", None)
    ours.get("upstream", {}).pop("stream", None)  # and it watched the stream, what reached
    # the caller (nothing of these: each failed before or at its first chunk)
    assert ours == theirs
    assert err.to_dict() == problem.to_dict()
    assert err.to_json() == problem.to_json()
    assert repr(err) == repr(problem)
    assert err == problem
    assert hash(err) == hash(problem)
    clashing = vendor_members(type(raw), raw)
    for name in sorted(HARNESS - clashing - set(HARNESS_ONLY) - VENDOR_NAMES):
        assert read(err, name) == read(problem, name), name
    assert_one_meaning(err, raw)


def assert_one_meaning(err: HarnessError, raw: BaseException) -> None:
    """The rule of one meaning per name: ``code``, ``type`` and ``status`` read on the drop-in
    as on the vendor's exception (absent where its class has none); the harness's are
    ``err.problem``'s; every other harness member is the harness's unless the vendor's
    class defines it."""
    for name in sorted(VENDOR_NAMES):
        assert read(err, name) == read(raw, name), name
        if not hasattr(raw, name):
            with pytest.raises(AttributeError):
                getattr(err, name)
    problem = err.problem
    assert problem.code == err.problem.to_dict()["code"]
    assert problem.type == problem.to_dict()["type"]
    clashing = vendor_members(type(raw), raw)
    for name in ("retryable", "retry_after", "advice", "upstream", "detail", "title"):
        if name not in clashing:
            assert read(err, name) == read(problem, name), name


def assert_pickles(err: HarnessError) -> None:
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err)
    assert clone == err
    assert clone.problem.to_dict() == err.problem.to_dict()
    assert str(clone) == str(err)
    for name in ("code", "type", "status", "status_code", "message", "param", "request_id"):
        value = getattr(err, name, MISSING)
        if isinstance(value, (str, int)) or value is None:  # pickles carry texts redacted
            expected = redact(value) if isinstance(value, str) else value
            assert getattr(clone, name, MISSING) == expected, name


# -- every failure of the shipped cassettes, through the real clients --------------------------

RAISING = [p for p in cassette_paths() if load(p).provider != "http" or "_200" not in p.stem]


@pytest.mark.parametrize("path", RAISING, ids=[f"{p.parent.name}/{p.stem}" for p in RAISING])
def test_cassette_drop_ins_read_as_the_vendor_exception(path: Path) -> None:
    """The drop-in of each recorded failure against the raw vendor exception of it."""
    scenario = load(path)
    needed(scenario)
    raw = run(scenario).exception
    if raw is None:  # a stop reason or a 2xx body: no vendor exception to stand in for
        return
    err = run(scenario, prepare=wrap).exception
    assert isinstance(err, HarnessError), err
    assert isinstance(err.problem.__cause__, type(raw))
    raw = err.problem.__cause__  # the same response, as the vendor raised it inside wrap()
    clashes = assert_vendor_view(err, raw)
    assert_harness_view(err, raw)
    assert_pickles(err)
    assert err.problem.code == scenario.expect["code"]
    if scenario.provider in ("openai", "google") and hasattr(raw, "code"):
        assert "code" in clashes  # the case the issue is about: the vendor's code, not ours
        assert err.code == raw.code


def test_the_issues_example() -> None:
    """``e.code == "insufficient_quota"`` matches again; ``err.problem.code`` is the harness's."""
    import openai

    err = run(load(shipped() / "openai" / "insufficient_quota_429.yaml"), prepare=wrap).exception
    assert is_instance(err, openai.RateLimitError)
    assert isinstance(err, UpstreamRateLimitedError)
    vendor_view: Any = err  # type checkers know only the harness side of a drop-in
    assert vendor_view.code == "insufficient_quota"
    assert vendor_view.type == "insufficient_quota"
    assert err.problem.code == "upstream.rate_limited"
    assert err.retryable is False
    assert err.advice == "human"
    assert err.to_dict()["code"] == "upstream.rate_limited"


def test_genai_code_and_status_are_googles() -> None:
    from google.genai import errors

    err = run(
        load(shipped() / "google" / "rate_limit_free_tier_per_minute_429.yaml"), prepare=wrap
    ).exception
    assert is_instance(err, errors.ClientError)
    assert isinstance(err, HarnessError)
    vendor_view: Any = err  # type checkers know only the harness side of a drop-in
    assert (vendor_view.code, vendor_view.status) == (429, "RESOURCE_EXHAUSTED")
    assert err.problem.code == "upstream.rate_limited"
    assert err.problem.status in (None, 429)


def test_an_anthropic_error_code_class_reads_as_the_vendors() -> None:
    """The shipped spend-cap 429 (``error.details.error_code`` ``enforced_spend_limit_reached``)
    replayed through the real client: anthropic 2.5+ raises ``EnforcedSpendLimitReachedError``
    (a ``RateLimitError``) for it, and the drop-in is one too. Its members read as the
    vendor's, 2.17's ``error_code``, ``api_message``, ``details`` and ``workspace_id`` among
    them; ``code`` and ``status``, which anthropic's classes lack, raise ``AttributeError``;
    the harness view is a spend limit: not retryable, a human's to lift."""
    anthropic = pytest.importorskip("anthropic")
    err = run(
        load(shipped() / "anthropic" / "spend_cap_429_enforced_spend_limit.yaml"), prepare=wrap
    ).exception
    assert isinstance(err, HarnessError)
    raw = err.problem.__cause__
    assert isinstance(raw, anthropic.RateLimitError)
    assert is_instance(err, type(raw))
    error_class = getattr(anthropic, "EnforcedSpendLimitReachedError", None)
    assert (type(raw) is error_class) == (error_class is not None)
    vendor_view: Any = err  # type checkers know only the harness side of a drop-in
    members = ("error_code", "api_message", "details", "workspace_id", "type", "status_code")
    for name in (*members, "message", "body", "request_id"):
        assert read(err, name) == read(raw, name), name
    if hasattr(raw, "error_code"):  # 2.17
        assert vendor_view.error_code == "enforced_spend_limit_reached"
        assert vendor_view.details.error_code == "enforced_spend_limit_reached"
        assert str(err) == str(raw)  # the new format, "... (error_code: ..., path: ...)"
        assert "path: /v1/messages" in str(err)
    for name in ("code", "status"):
        with pytest.raises(AttributeError):
            getattr(vendor_view, name)
    assert (err.problem.code, err.retryable, err.advice) == (
        "upstream.rate_limited",
        False,
        "human",
    )
    assert err.upstream["code"] == "enforced_spend_limit_reached"


def test_the_class_list_holds_every_class_anthropics_factory_raises() -> None:
    """The classes the member rule is checked over include anthropic's (status, error_code)
    classes that ``anthropic`` itself does not export (2.17: 118 of 156)."""
    anthropic = pytest.importorskip("anthropic")
    listed = {cls for sdk, cls in CLASSES if sdk == "anthropic"}
    try:
        table = importlib.import_module("anthropic._error_classes").ERROR_CLASSES
    except ImportError:
        table = {}
    assert set(table.values()) <= listed
    assert anthropic.RateLimitError in listed
    if table:
        assert any(not hasattr(anthropic, cls.__name__) for cls in table.values())


# -- every exception class each SDK exports ----------------------------------------------------


def exported(module_name: str) -> list[type[BaseException]]:
    """The exception classes ``module_name`` exports; for anthropic (2.5+) also every class of
    its ``ERROR_CLASSES``, which the SDK raises for a (status, ``error_code``) pair and exports
    from its ``anthropic.types`` modules (2.17: 156 classes, 118 of them not in ``anthropic``)."""
    module = importlib.import_module(module_name)
    found: dict[str, type[BaseException]] = {}
    for name in sorted(dir(module)):
        value = getattr(module, name)
        if not name.startswith("_") and isinstance(value, type) and issubclass(value, Exception):
            found[value.__qualname__] = value
    if module_name == "anthropic":
        try:
            table = importlib.import_module("anthropic._error_classes").ERROR_CLASSES
        except ImportError:  # before 2.5: the status classes only, all exported above
            table = {}
        for cls in table.values():
            found.setdefault(cls.__qualname__, cls)
    return [found[name] for name in sorted(found)]


SDKS = {"openai": "openai", "anthropic": "anthropic", "google": "google.genai.errors"}
SDKS.update({name: name for name in ("httpx", "httpx2")})
CLASSES = [(sdk, cls) for sdk, module in SDKS.items() for cls in exported(module)]


def response_of(sdk: str) -> tuple[Any, Any, Any]:
    """A real recorded error response (request, response, parsed body) for ``sdk``'s classes."""
    library = http_library("openai") if sdk == "openai" else None
    if sdk == "anthropic":
        library = http_library("anthropic")
    if sdk in ("httpx", "httpx2"):
        library = importlib.import_module(sdk)
    cassette = {
        "openai": ("openai", "insufficient_quota_429"),
        "anthropic": ("anthropic", "rate_limit_429"),
        "google": ("google", "rate_limit_free_tier_per_minute_429"),
    }.get(sdk, ("openai", "insufficient_quota_429"))
    status, headers, body = recorded(*cassette)
    if library is None:  # google-genai builds its errors from the parsed body
        return None, None, json.loads(body)
    request = library.Request("POST", "https://api.example.test/v1/call")
    response = library.Response(status, headers=headers, content=body, request=request)
    return request, response, json.loads(body)


def completion() -> Any:
    """The chat completion of the shipped ``finish_length_200`` cassette, as the SDK parsed it."""
    result = run(load(shipped() / "openai" / "finish_length_200.yaml")).result
    assert result is not None
    return result


def build(cls: type[BaseException], sdk: str) -> BaseException | None:
    """An instance of ``cls`` made from the recorded response, as the SDK makes them."""
    request, response, body = response_of(sdk)
    message = "Error code: 429 - recorded"
    make: Any = cls  # each SDK's classes take their own arguments
    attempts: list[Callable[[], BaseException]] = [
        lambda: make(message, response=response, body=body),
        lambda: make(response=response, body=body),
        lambda: make(message, request, body=body),
        lambda: make(429, body, response),
        lambda: make(message, request=request, response=response),
        lambda: make(request=request),
        lambda: make(message, request=request),
        lambda: make(request),
        lambda: make(message, unsent_messages=[]),
        lambda: make(completion=completion()),
        lambda: make(message),
        make,
    ]
    for attempt in attempts:
        try:
            return attempt()
        except Exception:
            continue
    return None


@pytest.mark.parametrize(
    ("sdk", "vendor"), CLASSES, ids=[f"{sdk}.{cls.__name__}" for sdk, cls in CLASSES]
)
def test_every_exported_class_reads_as_the_vendors(sdk: str, vendor: type[BaseException]) -> None:
    """The drop-in class resolves each clashing member to the vendor's, and an instance made
    from a recorded response reads like the raw vendor exception."""
    cls = dropin_class(UpstreamInvalidRequestError, vendor)
    assert issubclass(cls, vendor)
    assert issubclass(cls, UpstreamInvalidRequestError)
    for name in vendor_members(vendor, None) & HARNESS:
        found = inspect.getattr_static(cls, name)
        ours = inspect.getattr_static(vendor, name, MISSING)
        assert found is ours or (ours is MISSING and type(found).__name__ == "_VendorMember"), name
    raw = build(vendor, sdk)
    assert raw is not None, f"no way to make a {vendor.__name__} from a recorded response"
    err = typed_error(raw)
    assert isinstance(err, vendor)
    assert isinstance(err, HarnessError)
    assert_vendor_view(err, raw)
    assert_harness_view(err, raw)
    assert_pickles(err)


# -- dropin=False ------------------------------------------------------------------------------


def test_dropin_false_raises_plain_harness_errors() -> None:
    import openai

    scenario = load(shipped() / "openai" / "insufficient_quota_429.yaml")
    err = run(scenario, prepare=lambda client: wrap(client, dropin=False)).exception
    assert type(err) is UpstreamRateLimitedError
    assert not is_instance(err, openai.APIError)
    assert err.code == "upstream.rate_limited"
    assert isinstance(err.__cause__, openai.RateLimitError)
    assert err.problem is err
    assert err.max_attempts == 1  # the wrapped client's own retries still count


def test_normalized_dropin_false() -> None:
    import openai

    raw = run(load(shipped() / "openai" / "insufficient_quota_429.yaml")).exception
    assert raw is not None
    with pytest.raises(HarnessError) as info, normalized(dropin=False):
        raise raw
    assert type(info.value) is UpstreamRateLimitedError
    assert info.value.__cause__ is raw
    with pytest.raises(openai.RateLimitError) as dropped, normalized():
        raise raw
    assert dropped.value.code == "insufficient_quota"
    assert normalize(dropped.value).code == "upstream.rate_limited"


def test_setting_a_harness_member_on_a_drop_in_sets_the_plain_error() -> None:
    err = run(load(shipped() / "openai" / "insufficient_quota_429.yaml"), prepare=wrap).exception
    assert isinstance(err, HarnessError)
    err.retryable = True
    assert err.problem.retryable is True
    assert err.to_dict()["retryable"] is True
    err.code = "changed"  # the vendor's member stays the vendor's
    assert err.problem.code == "upstream.rate_limited"


def test_http_binding_renders_the_harness_view_of_a_drop_in() -> None:
    """Gemini's ``status`` is a string on the drop-in; the HTTP binding reads the harness's."""
    from normalize_errors.bindings.http import to_http

    err = run(
        load(shipped() / "google" / "rate_limit_free_tier_per_minute_429.yaml"), prepare=wrap
    ).exception
    assert isinstance(err, HarnessError)
    status, headers, body = to_http(err)
    assert (status, headers, body) == to_http(err.problem)
    assert status == 429
    assert json.loads(body)["code"] == "upstream.rate_limited"


class GatewayError(Exception):
    """An in-house vendor class: ``code`` only annotated, ``retry_after`` set by some calls."""

    code: str

    def __init__(self, message: str, *, wait: float | None = None) -> None:
        super().__init__(message)
        if wait is not None:
            self.retry_after = wait


def test_a_member_the_vendor_sets_on_some_instances_reads_as_the_vendors_there() -> None:
    """``retry_after`` set by the vendor's ``__init__`` wins on that instance; elsewhere, and
    once deleted, the harness's value shows. Setting and deleting follow the same rule."""
    cls = dropin_class(UpstreamRateLimitedError, GatewayError)
    assert cls.retry_after is UpstreamRateLimitedError.retry_after  # as on the harness class
    problem = UpstreamRateLimitedError("slow", retry_after=3.0)
    err = make_dropin(cls, problem, GatewayError("slow", wait=7.0))
    assert err.retry_after == 7.0  # the vendor's
    err.retry_after = 8.0
    assert (err.retry_after, problem.retry_after) == (8.0, 3.0)
    del err.retry_after
    assert err.retry_after == 3.0  # now the harness's
    err.retry_after = 4.0
    assert problem.retry_after == 4.0


def test_a_member_the_vendor_only_annotates_is_the_instances() -> None:
    """``code`` annotated by the vendor: absent until set, as on the vendor's class."""
    cls = dropin_class(UpstreamRateLimitedError, GatewayError)
    err = make_dropin(cls, UpstreamRateLimitedError("x"), GatewayError("x"))
    with pytest.raises(AttributeError):
        _ = err.code
    err.code = "gw_busy"
    assert (err.code, err.problem.code) == ("gw_busy", "upstream.rate_limited")
    del err.code
    with pytest.raises(AttributeError):
        del err.code


def test_a_vendor_class_that_refuses_subclasses_gives_a_plain_typed_error() -> None:
    """No drop-in class can be made: the plain harness error, still typed, ``exc`` its cause."""

    class Sealed(Exception):
        def __init_subclass__(cls, **kwargs: Any) -> None:
            raise TypeError("Sealed cannot be subclassed")

    assert dropin_class(UpstreamRateLimitedError, Sealed) is UpstreamRateLimitedError
    exc = Sealed("nope")
    err = typed_error(exc)
    assert type(err) is class_for_code(err.code)  # the plain class of its code
    assert not is_instance(err, Sealed)
    assert err.__cause__ is exc


def test_a_drop_in_under_construction_has_no_problem_yet() -> None:
    """``problem`` before the instance is built (as while unpickling) is an AttributeError."""
    cls = dropin_class(UpstreamRateLimitedError, GatewayError)
    bare = cls.__new__(cls)
    with pytest.raises(AttributeError, match="problem"):
        _ = bare.problem


class Unprintable(Exception):
    """A vendor class whose ``__str__`` fails (it formats a member that is not there)."""

    def __str__(self) -> str:
        return f"{self.args[0]}: {self.reason}"  # type: ignore[attr-defined]


def test_a_drop_in_prints_even_when_the_vendors_str_fails() -> None:
    """``str()`` of the drop-in falls back to the harness text; it never raises."""
    err = typed_error(Unprintable("gateway said no"))
    assert is_instance(err, Unprintable)
    assert str(err) == str(err.problem)


def test_a_drop_in_equals_harness_errors_only() -> None:
    err = typed_error(GatewayError("slow"))
    assert err == err.problem
    assert err != GatewayError("slow")
    assert err != "slow"


def test_deleting_a_harness_member_of_a_drop_in_deletes_it_on_the_plain_error() -> None:
    err = typed_error(GatewayError("slow"))
    err.result = ["a"]
    assert err.problem.result == ["a"]
    del err.result
    assert "result" not in vars(err.problem)


def test_a_drop_in_class_can_be_introspected() -> None:
    """Tools that read every member of a class (``inspect.getmembers``, pydoc) can read a
    drop-in class: a member the vendor only annotates reads, on the class, as its descriptor
    rather than raising, and on an instance as the instance's value."""
    cls = dropin_class(UpstreamRateLimitedError, GatewayError)
    members = dict(inspect.getmembers(cls))
    assert "code" in members
    assert members["code"] is vars(cls)["code"]
    err = make_dropin(cls, UpstreamRateLimitedError("x"), GatewayError("x"))
    err.code = "gw_busy"
    assert err.code == "gw_busy"


def test_two_threads_asking_for_the_same_drop_in_class_get_one() -> None:
    """A thread that finds no class, then waits while another makes it, takes that class
    instead of making a second one (one class per pair, so ``except`` and ``type()`` agree)."""
    import threading
    import time
    import weakref

    from normalize_errors._model import _dropin

    class RacedError(Exception):
        pass

    key = (UpstreamRateLimitedError, RacedError)
    got: list[type] = []
    with _dropin._LOCK:  # "the other thread" is making the class
        worker = threading.Thread(target=lambda: got.append(dropin_class(*key)))
        worker.start()
        time.sleep(0.2)  # the worker finds no class and waits for the lock
        made = type("UpstreamRateLimitedError", key, _dropin._namespace(*key))
        _dropin._MADE.setdefault(RacedError, {})[UpstreamRateLimitedError] = weakref.ref(made)
    worker.join(5)
    assert got == [made]
    assert dropin_class(*key) is made


def test_a_drop_in_whose_cause_was_cleared_pickles_without_one() -> None:
    """``err.__cause__ = None`` (the caller let go of the vendor exception): the pickle loads
    as the same drop-in class and problem, still without a cause."""
    err = typed_error(GatewayError("slow"))
    err.__cause__ = None
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err)
    assert again.__cause__ is None
    assert again.problem == err.problem
    assert again.args == err.args


def test_the_harness_class_behind_a_drop_in_class() -> None:
    """``_pickling._harness_class`` (used by ``repr``): a drop-in class gives the harness
    class it was made from, a plain harness class itself."""
    from normalize_errors._model._pickling import _harness_class

    cls = dropin_class(UpstreamRateLimitedError, GatewayError)
    assert cls is not UpstreamRateLimitedError
    assert _harness_class(cls) is UpstreamRateLimitedError
    assert _harness_class(UpstreamRateLimitedError) is UpstreamRateLimitedError


def test_an_exception_group_raised_through_normalized_gives_a_typed_error() -> None:
    """An exception group cannot be a drop-in (its ``__new__`` needs its members): the
    plain harness error of its member is raised from the group, never a ``TypeError``."""
    group = ExceptionGroup("grouped", [TimeoutError("slow")])
    err = typed_error(group)
    assert type(err) is type(err.problem)
    assert err.code == "upstream.unavailable"
    with pytest.raises(HarnessError) as raised, normalized():
        raise group
    assert raised.value.code == "upstream.unavailable"
    assert raised.value.__cause__ is group


# -- one meaning per name (issue 24) ----------------------------------------------------------


@pytest.mark.parametrize(
    "cassette",
    [
        "openai/insufficient_quota_429",
        "anthropic/rate_limit_429",
        "google/rate_limit_free_tier_per_minute_429",
    ],
)
def test_code_type_and_status_are_the_vendors_on_every_drop_in(cassette: str) -> None:
    """``err.code``/``type``/``status`` read as the vendor's exception has them (absent where
    its class has none: anthropic's ``code``, openai's ``status``); ``err.problem`` has the
    harness's; the other harness members are the harness's."""
    scenario = load(shipped() / f"{cassette}.yaml")
    needed(scenario)
    raw = run(scenario).exception
    err = run(scenario, prepare=wrap).exception
    assert raw is not None
    assert isinstance(err, HarnessError)
    for name in sorted(VENDOR_NAMES):
        if hasattr(raw, name):
            assert getattr(err, name) == getattr(raw, name), name
        else:
            with pytest.raises(AttributeError):
                getattr(err, name)
    assert err.problem.code == "upstream.rate_limited"
    assert err.problem.type == err.problem.to_dict()["type"]  # the problem type URI
    assert err.retryable == err.problem.retryable
    assert err.advice == err.problem.advice
    assert err.upstream == err.problem.upstream
