"""The extension point: registered readers and rules, as a user's in-house gateway uses them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from normalize_errors import (
    HarnessError,
    UpstreamOverloadedError,
    UpstreamRateLimitedError,
    add_rules,
    from_response,
    normalize,
    register_reader,
    register_response_reader,
    rule,
    unregister_reader,
    unregister_response_reader,
)
from normalize_errors._reading import _readers
from normalize_errors.replay import load, run, shipped

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "extending.md"


pytestmark = pytest.mark.usefixtures("clean_registry")


class GatewayError(Exception):
    """An exception of a user's own package."""


GatewayError.__module__ = "mycorp_gateway.errors"


class SubGatewayError(GatewayError):
    """Defined here (in the tests' module), but a subclass of the gateway's."""


def overloaded(exc: BaseException) -> HarnessError | None:
    return UpstreamOverloadedError(f"gateway: {exc}", upstream={"provider": "mycorp"})


def test_the_guide_example_runs() -> None:
    """The extending guide's block runs as written (its asserts included)."""
    block = re.search(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block is not None
    exec(compile(block.group(1), "extending.md", "exec"), {"__name__": "guide"})


def test_a_registered_reader_reads_its_module_and_subclasses() -> None:
    """The reader answers for the module's classes and for subclasses defined elsewhere."""
    register_reader("mycorp_gateway", overloaded)
    for exc in (GatewayError("busy"), SubGatewayError("busy")):
        err = normalize(exc)
        assert isinstance(err, UpstreamOverloadedError)
        assert err.__cause__ is exc
        assert err.upstream == {"provider": "mycorp"}


def test_without_a_reader_the_builtin_path_answers() -> None:
    """Unregistered, the same exception is an internal error, as any unknown exception."""
    register_reader("mycorp_gateway", overloaded)
    unregister_reader("mycorp_gateway")
    assert normalize(GatewayError("busy")).code == "harness.internal_error"


def test_a_reader_that_declines_or_raises_leaves_it_to_the_builtin_path() -> None:
    """None and a reader's own exception both fall through; normalize never raises."""

    def broken(exc: BaseException) -> HarnessError | None:
        raise RuntimeError("bug in the reader")

    register_reader("mycorp_gateway", lambda exc: None)
    assert normalize(GatewayError("x")).code == "harness.internal_error"
    register_reader("mycorp_gateway", broken)
    assert normalize(TimeoutError()).code == "upstream.unavailable"  # other modules untouched
    assert normalize(GatewayError("x")).code == "harness.internal_error"


def test_the_longest_module_prefix_wins_and_users_win_over_the_library() -> None:
    """A reader for the submodule beats one for the package; a user's beats a built-in one."""
    register_reader("mycorp_gateway", overloaded)
    register_reader(
        "mycorp_gateway.errors",
        lambda exc: UpstreamRateLimitedError("from the submodule's reader"),
    )
    assert normalize(GatewayError()).code == "upstream.rate_limited"
    _readers.BUILTIN["mycorp_gateway.errors"] = "tests.test_readers:overloaded"
    assert normalize(GatewayError()).code == "upstream.rate_limited"
    unregister_reader("mycorp_gateway.errors")
    unregister_reader("mycorp_gateway")
    assert normalize(GatewayError()).code == "upstream.overloaded"  # the built-in, loaded lazily


def test_a_class_whose_module_is_no_name_leaves_it_to_its_bases() -> None:
    """A class made at run time with ``__module__`` set to no string (None, a number) is
    skipped; its base class's module still finds the reader."""
    register_reader("mycorp_gateway", overloaded)
    nameless = type("Nameless", (GatewayError,), {})
    nameless.__module__ = None  # type: ignore[assignment]
    odd = type("Odd", (Exception,), {})
    odd.__module__ = 7  # type: ignore[assignment]
    err = normalize(nameless("busy"))
    assert (err.code, err.detail) == ("upstream.overloaded", "gateway: busy")
    assert normalize(odd("x")).code == "harness.internal_error"


def test_register_reader_refuses_what_is_not_a_module_name() -> None:
    with pytest.raises(ValueError, match="not a module name"):
        register_reader("my corp", overloaded)


def fault_reader(status: Any, headers: Any, body: Any) -> HarnessError | None:
    if isinstance(body, dict) and "fault" in body:
        return UpstreamOverloadedError(
            str(body["fault"]), upstream={"provider": "mycorp", "status": status}
        )
    return None


def test_a_response_reader_is_asked_before_the_body_shape() -> None:
    """It gets the status as an int, lower-case headers and the parsed body."""
    seen: list[tuple[Any, Any, Any]] = []

    def spy(status: Any, headers: Any, body: Any) -> HarnessError | None:
        seen.append((status, headers, body))
        return fault_reader(status, headers, body)

    register_response_reader("mycorp", spy)
    err = from_response("503", {"X-Trace": "t1"}, b'{"fault": "queue full"}')
    assert (err.code, err.detail, err.upstream["status"]) == (
        "upstream.overloaded",
        "queue full",
        503,
    )
    assert seen == [(503, {"x-trace": "t1"}, {"fault": "queue full"})]
    # A body it declines goes on to the built-in readers.
    assert from_response(429, {}, {"error": {"message": "slow down"}}).code == (
        "upstream.rate_limited"
    )


def test_provider_names_a_response_reader_alone() -> None:
    """provider=name asks only that reader; when it declines, the body's shape decides."""
    register_response_reader("mycorp", fault_reader)
    register_response_reader("other", lambda s, h, b: UpstreamRateLimitedError("other"))
    assert from_response(503, {}, {"fault": "full"}, provider="mycorp").code == (
        "upstream.overloaded"
    )
    err = from_response(
        529,
        {},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        provider="mycorp",
    )
    assert (err.code, err.upstream["provider"]) == ("upstream.overloaded", "anthropic")
    # Without a name the newest registered reader is asked first.
    assert from_response(503, {}, {"fault": "full"}).code == "upstream.rate_limited"
    unregister_response_reader("other")
    assert from_response(503, {}, {"fault": "full"}).code == "upstream.overloaded"


def test_a_response_reader_reads_the_error_responses_of_httpx_and_httpx2(lib: Any) -> None:
    """An HTTP client's error status goes through the same dispatcher as ``from_response``:
    a registered response reader answers it, and the exception, method and host join
    ``upstream``; a body the reader declines is read as before."""
    register_response_reader("mycorp", fault_reader)

    def answer(body: bytes) -> BaseException:
        def handler(request: Any) -> Any:
            return lib.Response(503, content=body, request=request)

        with lib.Client(transport=lib.MockTransport(handler)) as client:
            try:
                client.post("https://gw.mycorp.example/v1/chat").raise_for_status()
            except lib.HTTPStatusError as exc:
                found: BaseException = exc
                return found
        raise AssertionError("no error status")

    err = normalize(answer(b'{"fault": "queue full"}'))
    assert (err.code, err.detail, err.upstream["provider"]) == (
        "upstream.overloaded",
        "queue full",
        "mycorp",
    )
    assert err.upstream["host"] == "gw.mycorp.example"
    assert err.upstream["method"] == "POST"
    assert err.upstream["exception"].endswith("HTTPStatusError")
    plain = normalize(answer(b"Service Unavailable"))
    assert (plain.code, plain.upstream["provider"]) == ("upstream.unavailable", "http")


def test_a_response_reader_that_raises_is_skipped() -> None:
    def broken(status: Any, headers: Any, body: Any) -> HarnessError | None:
        raise KeyError("bug")

    register_response_reader("broken", broken)
    assert from_response(503, {}, "Service Unavailable").code == "upstream.unavailable"


def test_added_rules_come_before_the_providers_table() -> None:
    """An added row decides before the table; rows added later before earlier ones."""
    body = {"error": {"message": "All replicas busy", "type": "server_error"}}
    assert from_response(500, {}, body, provider="openai").code == "upstream.unavailable"
    add_rules("openai", rule("upstream.overloaded", "proxy wording", message="replicas busy"))
    err = from_response(500, {}, body, provider="openai")
    assert (err.code, err.retryable) == ("upstream.overloaded", True)
    add_rules(
        "openai",
        rule("upstream.rate_limited", "later row", message="all replicas", retryable=False),
    )
    err = from_response(500, {}, body, provider="openai")
    assert (err.code, err.retryable) == ("upstream.rate_limited", False)
    # Other providers' tables are untouched.
    anthropic = {"type": "error", "error": {"type": "api_error", "message": "All replicas busy"}}
    assert from_response(500, {}, anthropic).code == "upstream.unavailable"


def test_added_rules_apply_to_real_sdk_exceptions() -> None:
    """A rule added for openai decides for the real openai exception of a replayed cassette."""
    exc = run(load(shipped() / "openai" / "server_error_500.yaml")).exception
    assert exc is not None
    assert normalize(exc).code == "upstream.unavailable"
    add_rules("openai", rule("upstream.overloaded", "test row", message="error processing"))
    err = normalize(exc)
    assert (err.code, err.upstream["status"]) == ("upstream.overloaded", 500)


def test_the_librarys_own_response_readers_load_lazily_and_come_after_the_users() -> None:
    """A built-in response reader is named by module path and imported on first use."""
    _readers.BUILTIN_RESPONSES["faults"] = "tests.test_readers:fault_reader"
    assert from_response(503, {}, {"fault": "full"}).code == "upstream.overloaded"
    register_response_reader("mine", lambda s, h, b: UpstreamRateLimitedError("mine"))
    assert from_response(503, {}, {"fault": "full"}).code == "upstream.rate_limited"
    assert from_response(503, {}, {"fault": "full"}, provider="faults").code == (
        "upstream.overloaded"
    )
