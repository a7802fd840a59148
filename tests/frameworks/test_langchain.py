"""LangChain core's exceptions, produced by running its fake chat models, parsers and tools,
and langchain-openai's ChatOpenAI over a real openai client answering from shipped cassettes."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import ToolException, tool
from pydantic import BaseModel

from normalize_errors import HarnessError, normalize
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.frameworks.langchain import retry_if

from ..support import raised, recorded, valid


class Person(BaseModel):
    age: int


def parse(parser: Any, text: str) -> HarnessError:
    exc = raised(lambda: (FakeListChatModel(responses=[text]) | parser).invoke("hi"))
    return valid(normalize(exc))


def test_output_parser_exceptions() -> None:
    """No JSON: output.malformed; JSON that breaks the schema: schema_violation at /age."""
    err = parse(JsonOutputParser(), "no json here")
    assert err.code == "output.malformed"
    assert "not valid JSON" in (err.model_feedback or "")
    assert "troubleshooting" not in (err.detail or "")
    assert err.upstream["llm_output"] == "no json here"
    schema = parse(PydanticOutputParser(pydantic_object=Person), '{"age": "old"}')
    assert schema.code == "output.schema_violation"
    assert schema.location == {"pointer": "/age"}
    assert "/age" in (schema.model_feedback or "")


@tool
def lookup(x: int) -> int:
    """Look x up."""
    raise ToolException("the index is offline")


def test_tool_exception_and_tool_input_validation() -> None:
    """ToolException: tool.execution_failed; bad input: output.invalid_tool_arguments."""
    failed = valid(normalize(raised(lambda: lookup.invoke({"x": 1}))))
    assert (failed.code, failed.model_feedback) == (
        "tool.execution_failed",
        "the index is offline",
    )
    bad = valid(normalize(raised(lambda: lookup.invoke({"x": "zz"}))))
    assert bad.code == "output.invalid_tool_arguments"
    assert bad.location == {"tool_name": "lookup", "pointer": "/x"}


def chat(name: str) -> Any:
    from langchain_openai import ChatOpenAI

    http = http_library("openai")
    status, headers, body = recorded("openai", name)

    def answer(request: Any) -> Any:
        return http.Response(status, headers=headers, content=body)

    return ChatOpenAI(
        model="gpt-4o-mini",
        api_key="sk-test",  # type: ignore[arg-type]
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(answer)),
    )


def test_chat_openai_errors_are_read_by_the_provider_adapter() -> None:
    """langchain-openai's classes inherit openai's: status, body and retry_after are kept."""
    err = valid(normalize(raised(lambda: chat("rate_limit_tpm_429").invoke("hi"))))
    assert (err.code, err.retry_after, err.upstream["status"]) == (
        "upstream.rate_limited",
        26.604,
        429,
    )
    window = normalize(raised(lambda: chat("context_length_exceeded_400").invoke("hi")))
    assert window.code == "context.window_exceeded"


def test_a_structured_output_refusal_is_a_model_refusal() -> None:
    """with_structured_output over a refusal: langchain-core's ModelRefusalError."""
    runnable = chat("refusal_structured_output_200").with_structured_output(
        Person, method="json_schema"
    )
    exc = raised(lambda: runnable.invoke("hi"))
    assert "ModelRefusalError" in {k.__name__ for k in type(exc).__mro__}
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("policy.model_refusal", False)


def test_with_retry_retries_only_what_is_retryable() -> None:
    """retry_if as with_retry's predicate: a 500 is retried, a spent quota is not."""
    calls: list[str] = []

    def calling(name: str) -> Any:
        model = chat(name)

        def call(text: str) -> Any:
            calls.append(name)
            return model.invoke(text)

        return RunnableLambda(call).with_retry(
            retry_if_exception_type=retry_if, stop_after_attempt=3, wait_exponential_jitter=False
        )

    raised(lambda: calling("server_error_500").invoke("hi"))
    assert calls.count("server_error_500") == 3
    raised(lambda: calling("insufficient_quota_429").invoke("hi"))
    assert calls.count("insufficient_quota_429") == 1
    assert retry_if(ToolException("x")) is False


def test_the_repair_loop_re_prompts_with_the_parsers_feedback() -> None:
    """repair(): a reply with no JSON, then a valid one once the feedback is in the prompt."""
    from normalize_errors.retry import repair

    model = FakeListChatModel(responses=["Sure! Here it is.", '{"age": 3}'])
    chain = model | PydanticOutputParser(pydantic_object=Person)
    prompts: list[str] = []

    def ask(feedback: str | None) -> Person:
        prompt = "How old?" + (f"\n{feedback}" if feedback else "")
        prompts.append(prompt)
        result: Person = chain.invoke(prompt)
        return result

    assert repair(ask) == Person(age=3)
    assert len(prompts) == 2
    assert prompts[1].endswith("Answer with valid JSON only.")


def test_a_bedrock_context_overflow_is_read_by_the_bedrock_adapter() -> None:
    """ChatBedrockConverse over a real botocore client: 400 "Input is too long".

    langchain-aws re-raises botocore's ValidationException as a class that is also
    langchain-core's ``ContextOverflowError``. Like langchain-openai's overflow classes (also
    ``openai.*``) it is left to the provider adapter, here Bedrock's, which keeps the status
    and request id: no installed package raises a bare ``ContextOverflowError``, so that row
    of the LangChain reader is read by name only. The response comes from
    ``recorded/bedrock_input_too_long_400.yaml`` (its source there), served through
    botocore's ``before-send`` event, so botocore's own parser reads it.
    """
    pytest.importorskip("langchain_aws")
    from pathlib import Path

    import boto3
    import yaml
    from botocore.awsrequest import AWSResponse
    from langchain_aws import ChatBedrockConverse
    from langchain_core.exceptions import ContextOverflowError

    data = yaml.safe_load(
        (Path(__file__).parent / "recorded" / "bedrock_input_too_long_400.yaml").read_text()
    )["response"]

    class Raw:
        def stream(self, **kwargs: Any) -> Any:
            yield data["body"].encode()

    def answer(request: Any, **kwargs: Any) -> AWSResponse:
        return AWSResponse(request.url, data["status"], data["headers"], Raw())

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIA-FAKE-FOR-TESTS",  # a placeholder, never sent anywhere
        aws_secret_access_key="fake-secret-for-tests",
    )
    client.meta.events.register("before-send.bedrock-runtime.Converse", answer)
    model = ChatBedrockConverse(client=client, model="anthropic.claude-3-5-sonnet-20240620-v1:0")
    exc = raised(lambda: model.invoke("hi"))
    assert isinstance(exc, ContextOverflowError)
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("context.window_exceeded", False)
    assert (err.upstream["provider"], err.upstream["status"]) == ("bedrock", 400)
    assert err.upstream["request_id"] == "16fb0962-139d-4c70-ba9c-602d9630e854"
    assert err.upstream["exception"].startswith("langchain_aws.")
    assert "Input is too long" in (err.detail or "")
    assert err.__cause__ is exc


def test_a_parser_failure_without_a_parsing_cause_is_malformed_output() -> None:
    """LangChain's own checks of parsed JSON (a missing key, a list where an object is due)
    raise ``OutputParserException`` with no JSON or validation error behind it: the output
    is malformed, and the parser's message is the feedback."""
    from langchain_core.utils.json import parse_and_check_json_markdown

    missing = valid(
        normalize(raised(lambda: parse_and_check_json_markdown('{"a": 1}', ["answer"])))
    )
    assert missing.code == "output.malformed"
    assert missing.model_feedback == (
        "Got invalid return object. Expected key `answer` to be present, but got {'a': 1}"
    )
    assert missing.causes == []
    listed = valid(normalize(raised(lambda: parse_and_check_json_markdown("[1, 2]", ["a"]))))
    assert listed.code == "output.malformed"
    assert (listed.model_feedback or "").startswith("Expected JSON object (dict), but got: list")
    assert listed.upstream["llm_output"] == "[1, 2]"


def test_other_langchain_exceptions_are_left_to_the_general_path() -> None:
    """A langchain_core exception that is no parser, tool or model error (a tracer's):
    the reader declines, and the answer is the general one for an unknown exception."""
    from langchain_core.exceptions import TracerException

    from normalize_errors.frameworks.langchain import _read

    exc = TracerException("the tracer could not start a run")
    assert _read(exc) is None
    err = valid(normalize(exc))
    assert (err.code, err.upstream["exception"]) == (
        "harness.internal_error",
        "langchain_core.exceptions.TracerException",
    )
