"""The exception tree: its drawing, and how every class behaves as a Python exception."""

from __future__ import annotations

import copy
import pickle
import pickletools
import re
import subprocess
import sys
from collections.abc import Callable

import pytest

import normalize_errors
from normalize_errors import (
    CODES,
    HarnessError,
    ModelRefusalError,
    OutputError,
    OutputTruncatedError,
    PolicyError,
    UpstreamError,
    UpstreamRateLimitedError,
    class_for_code,
)
from normalize_errors._model import _code_classes
from normalize_errors._model._exceptions import MAX_CAUSE_DEPTH, MAX_CAUSES

ALL_CLASSES = [
    obj
    for obj in vars(normalize_errors).values()
    if isinstance(obj, type) and issubclass(obj, HarnessError)
]


def drawn_tree() -> dict[str, tuple[str | None, str | None]]:
    """Parse the tree drawn in the docstring of the classes' module: name -> (parent, code)."""
    doc = _code_classes.__doc__ or ""
    block = doc.split("::", 1)[1].split("\n\n")[1]
    parents: list[str] = []
    out: dict[str, tuple[str | None, str | None]] = {}
    lines = block.splitlines()
    base = len(lines[0]) - len(lines[0].lstrip())
    for line in lines:
        match = re.match(r"^([\s│├└─]*)(\w+)\s*([a-z0-9_.]*)$", line)
        assert match, line
        depth = (len(match.group(1)) - base) // 4
        del parents[depth:]
        out[match.group(2)] = (parents[-1] if parents else None, match.group(3) or None)
        parents.append(match.group(2))
    return out


def test_the_drawing_matches_the_classes() -> None:
    """Every class is drawn under its real parent with its real code, and nothing else is."""
    tree = drawn_tree()
    assert set(tree) == {cls.__name__ for cls in ALL_CLASSES}
    for cls in ALL_CLASSES:
        parent, code = tree[cls.__name__]
        base = cls.__bases__[0]
        assert parent == (None if cls is HarnessError else base.__name__), cls
        assert code == vars(cls).get("code"), cls


def instance_of(cls: type[HarnessError]) -> HarnessError:
    """A fully populated instance of ``cls``."""
    code = cls.code if "code" in vars(cls) else None
    if code is None:
        category = vars(cls).get("_category")
        code = f"{category}.something_new" if category else "x-acme.failed"
    err = cls(
        "It failed.",
        code=code,
        retryable=True,
        model_feedback="Try again with valid JSON.",
        retry_after=1.5,
        attempts=2,
        max_attempts=3,
        limit={"name": "turns", "value": 50, "observed": 50},
        location={"run_id": "run_1", "turn": 3, "pointer": "/a/0"},
        upstream={"provider": "openai", "status": 429, "code": "rate_limit_exceeded"},
        causes=[HarnessError.from_code("output.malformed", "bad json")],
        extensions={"x-trace": "abc"},
    )
    err.__cause__ = ValueError("the original")
    return err


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda c: c.__name__)
def test_every_class_pickles_copies_compares_and_hashes(cls: type[HarnessError]) -> None:
    """Frameworks ship exceptions between processes: every class must survive it."""
    err = instance_of(cls)
    for clone in (pickle.loads(pickle.dumps(err)), copy.deepcopy(err), copy.copy(err)):
        assert type(clone) is type(err)
        assert clone == err
        assert hash(clone) == hash(err)
        assert clone.to_dict() == err.to_dict()
        assert str(clone) == str(err)
        assert repr(clone) == repr(err)
    restored = pickle.loads(pickle.dumps(err))
    assert isinstance(restored.__cause__, ValueError)
    assert restored.__cause__.args == ("the original",)
    assert {err, restored} == {err}


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda c: c.__name__)
def test_str_and_repr_are_concise_and_stable(cls: type[HarnessError]) -> None:
    """str() is 'code: detail'; repr() names the class and the members that are set."""
    err = instance_of(cls)
    assert str(err) == f"{err.code}: It failed."
    assert repr(err).startswith(f"{cls.__name__}('It failed.'")
    assert "retry_after=1.5" in repr(err)
    bare = class_for_code(err.code)(code=err.code)
    assert str(bare) == f"{err.code}: {bare.title}"


def test_catch_by_code_category_or_base() -> None:
    """An error is caught by its class, its category and HarnessError, and keeps __cause__."""
    original = KeyError("vendor")

    def fail() -> None:
        try:
            raise original
        except KeyError as exc:
            raise UpstreamRateLimitedError("429") from exc

    for clause in (UpstreamRateLimitedError, UpstreamError, HarnessError, Exception):
        with pytest.raises(clause) as info:
            fail()
        assert info.value.__cause__ is original
    with pytest.raises(PolicyError):
        raise ModelRefusalError
    assert not issubclass(ModelRefusalError, OutputError)


def test_effective_and_explicit_flags() -> None:
    """retryable/model_recoverable read explicit values, else the registry defaults."""
    err = UpstreamRateLimitedError()
    assert (err.retryable, err.model_recoverable) == (True, False)
    assert "retryable" not in err.to_dict()
    err.retryable = False
    assert err.retryable is False
    assert err.to_dict()["retryable"] is False
    err.retryable = None
    assert err.retryable is True


def test_constructor_rejects_wrong_codes() -> None:
    """A class cannot carry another class's code, and the base needs a code."""
    with pytest.raises(ValueError, match="has code"):
        UpstreamRateLimitedError(code="upstream.overloaded")
    with pytest.raises(ValueError, match="category"):
        UpstreamError(code="policy.new_rule")
    with pytest.raises(ValueError, match="not a harness error code"):
        HarnessError(code="Upstream.Bad")
    with pytest.raises(TypeError, match="needs a code"):
        HarnessError()
    with pytest.raises(ValueError, match="retry_after"):
        UpstreamRateLimitedError(retry_after=-1)
    with pytest.raises(TypeError, match="causes"):
        HarnessError(code="x-a.b", causes=["not an error"])  # type: ignore[list-item]


def test_every_registered_code_constructs_with_registry_members() -> None:
    """A bare error of each code has the registered title, origin and the IANA type URI."""
    for code, info in CODES.items():
        err = class_for_code(code)()
        assert err.to_dict() == {
            "type": normalize_errors.IANA_TYPE,
            "title": info.title,
            "code": code,
            "origin": info.origin,
        }
        assert err.http_status == info.http_status


def chain(depth: int) -> HarnessError:
    """An error with ``depth`` levels of causes; the innermost has detail 'root'."""
    err = HarnessError.from_code("tool.execution_failed", "root")
    for level in range(depth):
        err = HarnessError.from_code("upstream.agent_failed", f"level {level}", causes=[err])
    return err


def depth_of(err: HarnessError) -> int:
    """How many levels of causes hang under ``err``."""
    depth = 0
    while err.causes:
        err = err.causes[-1]
        depth += 1
    return depth


def test_a_cycle_of_causes_is_cut_where_the_depth_ends() -> None:
    """Causes set after the fact can make a cycle (a under b under a ...): an error made over
    it stops at MAX_CAUSE_DEPTH, its last entry has no causes left, and it serialises."""
    import json

    a = HarnessError.from_code("tool.timeout", "a")
    b = HarnessError.from_code("upstream.agent_failed", "b", causes=[a])
    a.causes = [b]  # the cycle
    outer = HarnessError.from_code("upstream.agent_failed", "outer", causes=[a])
    assert depth_of(outer) == MAX_CAUSE_DEPTH
    last = outer
    while last.causes:
        last = last.causes[-1]
    assert last.causes == []
    assert last.detail in ("a", "b")
    assert a.causes == [b]  # the caller's own errors are not changed
    assert json.loads(outer.to_json())["detail"] == "outer"


def test_a_message_that_breaks_while_read_leaves_no_detail() -> None:
    """A vendor message that is a str subclass whose methods raise (hostile input in a body
    given as a dict): the detail is left out, the rest of the error still reads."""
    from normalize_errors import from_response

    class Breaking(str):
        def split(self, *args: object, **kwargs: object) -> list[str]:
            raise RuntimeError("no words")

    body = {"error": {"message": Breaking("boom"), "type": "server_error"}}
    err = from_response(500, {}, body, provider="openai")
    assert (err.code, err.detail, err.args) == ("upstream.unavailable", None, ())
    assert err.upstream["code"] == "server_error"
    assert "detail" not in err.to_dict()


def test_members_set_on_a_plain_error_are_kept() -> None:
    """``limit``, ``retry_after``, ``attempts`` and ``upstream`` set on an error made by the
    caller (nothing left to read from a vendor) are stored as given, sanitized."""
    err = HarnessError.from_code("loop.budget_exceeded", "spent")
    err.limit = {"name": "cost_usd", "value": 5.0, "observed": 5.2, "unit": "USD"}
    err.retry_after = 3
    err.attempts = 2
    err.upstream = {"provider": "mycorp", "note": f"key={'sk-' + 'a' * 40}"}
    assert err.limit == {"name": "cost_usd", "value": 5.0, "observed": 5.2, "unit": "USD"}
    assert (err.retry_after, err.attempts) == (3.0, 2)
    assert err.upstream["note"] == "key=[REDACTED]"
    err.limit = None
    assert err.limit is None
    assert "limit" not in err.to_dict()


def test_causes_are_bounded_and_keep_the_innermost_entry() -> None:
    """Deep chains are cut at MAX_CAUSE_DEPTH, long lists at MAX_CAUSES; the root survives."""
    deep = chain(50)
    assert depth_of(deep) == MAX_CAUSE_DEPTH
    innermost = deep
    while innermost.causes:
        innermost = innermost.causes[-1]
    assert innermost.detail == "root"
    many = [HarnessError.from_code("output.malformed", f"try {n}") for n in range(40)]
    err = HarnessError.from_code("output.retries_exhausted", causes=many)
    assert len(err.causes) == MAX_CAUSES
    assert err.causes[0].detail == "try 0"
    assert err.causes[-1].detail == "try 39"
    assert len(many) == 40  # the caller's list is not modified
    shallow = chain(3)
    assert depth_of(shallow) == 3


def test_results_and_stream_summaries_ride_along() -> None:
    """The SDK result stays on the error and pickles when it can; a stream's summary is a
    member of ``upstream`` (``err.stream``): it pickles, and goes wherever ``to_dict`` goes."""
    summary = {"api": "chat", "chunks": 2, "phase": "text", "output_chars": 5, "terminal": False}
    err = normalize_errors.OutputTruncatedError(upstream={"stream": summary})
    err.result = {"choices": []}
    clone = pickle.loads(pickle.dumps(err))
    assert (clone.result, clone.stream) == ({"choices": []}, summary)
    assert normalize_errors.HarnessError.from_dict(err.to_dict()).stream == summary
    assert normalize_errors.OutputTruncatedError().stream is None
    assert normalize_errors.OutputTruncatedError(upstream={"stream": "cut"}).stream is None
    err.result = lambda: None  # not picklable: dropped, the error still pickles
    assert pickle.loads(pickle.dumps(err)).result is None


# -- members an adapter leaves to first use ---------------------------------------------------


def _replayed(provider: str, name: str) -> BaseException:
    from normalize_errors.replay import load, run, shipped

    exc = run(load(shipped() / provider / f"{name}.yaml")).exception
    assert exc is not None
    return exc


def test_members_read_on_first_use_read_as_if_set_at_once() -> None:
    """detail, args, str, retry_after and upstream of an adapter's error are all there."""
    from normalize_errors import normalize

    err = normalize(_replayed("openai", "rate_limit_tpm_429"))
    assert err.args == (err.detail,)
    assert err.detail
    assert "Rate limit reached" in err.detail
    assert str(err) == f"upstream.rate_limited: {err.detail}"
    assert err.retry_after is not None
    assert err.retry_after > 0
    assert err.upstream["status"] == 429
    again = HarnessError.from_dict(err.to_dict())
    assert again.to_dict() == err.to_dict()


def test_a_member_set_before_it_is_read_keeps_the_value_set() -> None:
    """What a caller sets wins over what the adapter's facts would give later."""
    from normalize_errors import normalize

    err = normalize(_replayed("openai", "rate_limit_tpm_429"))
    err.retry_after = 99.0
    err.detail = "mine"
    err.attempts = 7
    assert (err.retry_after, err.detail, err.args, err.attempts) == (99.0, "mine", ("mine",), 7)
    assert err.upstream["provider"] == "openai"  # the rest is still read from the facts
    assert err.retry_after == 99.0


def _read_at_once(
    err: HarnessError, read: Callable[[HarnessError], tuple[object, ...]]
) -> set[tuple[object, ...]]:
    """What ``read(err)`` gives in six threads started at once, on an error nobody read yet."""
    import threading

    start = threading.Barrier(6, timeout=60)
    seen: list[tuple[object, ...]] = []

    def run() -> None:
        start.wait()
        seen.append(read(err))

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return set(seen)


def test_threads_reading_a_fresh_error_all_read_its_members() -> None:
    """Members read on first use by several threads at once read the same for every thread."""
    from normalize_errors import normalize

    exc = _replayed("openai", "rate_limit_tpm_429")
    for _ in range(50):
        seen = _read_at_once(
            normalize(exc), lambda e: (e.retry_after, e.detail, e.upstream.get("status"))
        )
        assert len(seen) == 1
        ((retry_after, detail, status),) = seen
        assert retry_after is not None
        assert detail is not None
        assert status == 429


def test_threads_reading_a_fresh_gemini_error_all_read_its_deferred_details() -> None:
    """Gemini's details beyond their ids are read on first use; threads reading at once all
    see them (and the wait RetryInfo states)."""
    from normalize_errors import normalize

    exc = _replayed("google", "rate_limit_free_tier_per_minute_429")
    for _ in range(50):
        seen = _read_at_once(
            normalize(exc),
            lambda e: (
                e.retry_after,
                str(e.upstream.get("violations")),
                str(e.upstream.get("help")),
            ),
        )
        assert len(seen) == 1
        ((retry_after, violations, links),) = seen
        assert retry_after is not None
        assert "PerMinute" in str(violations)
        assert "ai.google.dev" in str(links)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("attempts", 7),
        ("limit", {"name": "tokens per minute", "value": 30000, "unit": "tokens"}),
        ("upstream", {"provider": "in-house gateway"}),
    ],
)
def test_a_member_set_first_on_a_fresh_error_keeps_the_value_set(name: str, value: object) -> None:
    """Set before anything else is read, a member keeps the value set; the others are
    still read from the adapter's facts."""
    from normalize_errors import normalize

    err = normalize(_replayed("openai", "rate_limit_tpm_429"))
    setattr(err, name, value)
    assert getattr(err, name) == value
    assert err.code == "upstream.rate_limited"
    assert err.retry_after is not None
    assert err.retry_after > 0


def test_an_error_is_never_equal_to_what_is_no_harness_error() -> None:
    err = UpstreamRateLimitedError("slow down")
    assert err != "slow down"
    assert err != RuntimeError("slow down")
    assert err == UpstreamRateLimitedError("slow down")


def test_a_format_error_pickles_with_its_pointer() -> None:
    """ProblemFormatError crosses process boundaries (a worker validating payloads)."""
    from normalize_errors import ProblemFormatError

    with pytest.raises(ProblemFormatError) as info:
        HarnessError.from_dict({"code": "output.empty", "causes": [{"code": 1}]})
    clone = pickle.loads(pickle.dumps(info.value))
    assert (clone.pointer, clone.reason, str(clone)) == (
        info.value.pointer,
        info.value.reason,
        str(info.value),
    )


class NeedsCode(Exception):
    """A user's exception class whose ``__new__`` requires its argument."""

    def __new__(cls, code: int) -> NeedsCode:
        made = super().__new__(cls, code)
        made.code = code  # type: ignore[attr-defined]
        return made


def test_a_cause_that_cannot_be_rebuilt_comes_back_as_a_stand_in() -> None:
    """The cause's class imports but cannot be made without its arguments: the pickled
    error's cause is a ``CauseStandIn`` naming the class, with its args and attributes."""
    from normalize_errors import CauseStandIn, normalize

    err = normalize(NeedsCode(7))
    clone = pickle.loads(pickle.dumps(err))
    cause = clone.__cause__
    assert isinstance(cause, CauseStandIn)
    assert cause.original_class == f"{__name__}.NeedsCode"
    assert cause.args == (7,)
    assert cause.code == 7  # type: ignore[attr-defined]
    assert clone.to_dict() == err.to_dict()


def test_a_pickle_names_the_public_classes_and_loads_in_a_fresh_interpreter() -> None:
    """A pickle names each class by its public path (``normalize_errors.X``, the path
    tracebacks show) and the restore functions where they live, in ``_pickling``; a fresh
    interpreter loads it into an equal error with its cause."""
    from normalize_errors import normalize

    err = normalize(ConnectionError("refused"))
    err.causes = [OutputTruncatedError("cut")]
    text_opcodes = pickle.dumps(err, protocol=0)  # GLOBAL opcodes name "module qualname"
    named = {
        str(arg).replace(" ", ".")
        for op, arg, _ in pickletools.genops(text_opcodes)
        if op.name == "GLOBAL"
    }
    assert named == {
        "normalize_errors.UpstreamUnavailableError",
        "normalize_errors.OutputTruncatedError",
        "normalize_errors._model._pickling._restore",
        "normalize_errors._model._pickling._rebuild_named",
        "normalize_errors.CodeInfo",
    }
    data = pickle.dumps(err)
    code = (
        "import pickle, sys\n"
        "err = pickle.loads(sys.stdin.buffer.read())\n"
        "print(type(err).__module__, type(err).__name__, type(err.__cause__).__name__,"
        " err.to_json())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, check=True
    ).stdout.decode()
    module, name, cause, text = out.split(" ", 3)
    assert module == "normalize_errors"
    assert (name, cause) == ("UpstreamUnavailableError", "ConnectionError")
    assert HarnessError.from_json(text).to_dict() == err.to_dict()


class _Unreadable(dict):  # type: ignore[type-arg]
    """A mapping whose every way of reading raises (built here: hostile input)."""

    def items(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("no")

    def keys(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("no")

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("no")


def test_object_members_that_are_no_mapping_are_left_out_and_to_dict_still_works() -> None:
    err = HarnessError(
        "d",
        code="x-app.failed",
        location=_Unreadable(turn=1),
        limit=_Unreadable(),
        upstream=_Unreadable(),
    )
    assert (err.location, err.limit, err.upstream) == (None, None, {})
    err.limit = 5  # type: ignore[assignment]
    err.location = "turn 3"  # type: ignore[assignment]
    err.upstream = [1]  # type: ignore[assignment]
    assert err.to_dict() == {
        "type": err.type,
        "title": err.title,
        "detail": "d",
        "code": "x-app.failed",
    }
    err.location = {"turn": 3}
    assert err.to_dict()["location"] == {"turn": 3}
