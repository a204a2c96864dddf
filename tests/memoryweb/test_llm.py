"""The LLM interface, tested at the HTTP boundary: both SDKs run against an httpx2
MockTransport that answers the way Anthropic, OpenAI and an OpenAI-compatible server do on
the wire (bodies, status codes, error bodies, SSE streams)."""

import json
import logging

import httpx2
import pytest

from memory.config import get_config
from memoryweb.counters import counter_values
from memoryweb.errors import ConfigError
from memoryweb.llm import (
    client_for,
    parse_spec,
    prompt_names,
    prompt_schema,
    provider_status,
    render_prompt,
    set_http_client_factory,
    template_variables,
)
from memoryweb.llm import retry as llm_retry
from memoryweb.llm.parsing import extract_json, schema_problem, strict_compatible

ANTHROPIC_KEY = "sk-ant-test-key"
OPENAI_KEY = "sk-openai-test-key"
LOCAL_URL = "http://llm.local:8080/v1"
PROVIDERS = ["anthropic", "openai", "openai-compatible"]
MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4.1-mini", "openai-compatible": "qwen2.5:7b"}

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["query"],
    "properties": {"query": {"type": "string"}},
}
VARIABLES = {"history": "- We booked the flat in Lisbon", "message": "how much was it?"}


# --- what the providers send back ----------------------------------------------------------


def anthropic_message(content, stop_reason="end_turn", model=MODELS["anthropic"]):
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 412,
            "output_tokens": 37,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def tool_use(data, name="record_rewriter"):
    return {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": name, "input": data}


def openai_completion(content, finish_reason="stop", refusal=None, model=MODELS["openai"]):
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal, "annotations": []},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 412, "completion_tokens": 37, "total_tokens": 449},
        "system_fingerprint": "fp_b376dfbbd5",
        "service_tier": "default",
    }


def json_answer(provider, data):
    """A successful structured answer: a forced tool call, or JSON in message.content."""
    if provider == "anthropic":
        return httpx2.Response(200, json=anthropic_message([tool_use(data)], stop_reason="tool_use"))
    return httpx2.Response(200, json=openai_completion(json.dumps(data)))


def text_answer(provider, text, finish="complete"):
    if provider == "anthropic":
        stop = {"complete": "end_turn", "truncated": "max_tokens", "refusal": "refusal"}[finish]
        return httpx2.Response(
            200, json=anthropic_message([{"type": "text", "text": text}], stop_reason=stop)
        )
    if finish == "refusal":
        return httpx2.Response(200, json=openai_completion(None, refusal=text))
    return httpx2.Response(
        200, json=openai_completion(text, {"complete": "stop", "truncated": "length"}[finish])
    )


ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
}


def error_answer(provider, status, retry_after=None):
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    if provider == "anthropic":
        body = {
            "type": "error",
            "error": {"type": ANTHROPIC_ERRORS[status], "message": "provider error"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        }
    else:
        kind, code = OPENAI_ERRORS[status]
        body = {"error": {"message": "provider error", "type": kind, "param": None, "code": code}}
    return httpx2.Response(status, headers=headers, json=body)


def sse(events):
    lines = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, content=("\n".join(lines) + "\n").encode()
    )


def stream_answer(provider, chunks, finish="complete", error_after=None):
    """An SSE stream as the provider sends it; `error_after` chunks, Anthropic sends an error."""
    if provider == "anthropic":
        stop = {"complete": "end_turn", "truncated": "max_tokens", "refusal": "refusal"}[finish]
        message = anthropic_message([], stop_reason=None)
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            ("ping", {"type": "ping"}),
        ]
        for i, chunk in enumerate(chunks):
            if error_after is not None and i == error_after:
                events.append(
                    (
                        "error",
                        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                    )
                )
                return sse(events)
            delta = {"type": "text_delta", "text": chunk}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            )
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 15},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return sse(events)
    base = {
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1694268190,
        "model": MODELS[provider],
    }

    def chunk_of(delta, finish_reason=None):
        return (
            None,
            {
                **base,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
            },
        )

    events = [chunk_of({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk_of({"content": c}) for c in chunks]
    events += [chunk_of({}, {"complete": "stop", "truncated": "length"}[finish]), (None, "[DONE]")]
    return sse(events)


class Wire:
    """A MockTransport handler that plays scripted answers and records the requests."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request):
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    @property
    def body(self):
        return json.loads(self.requests[-1].content)

    def client(self):
        return httpx2.Client(transport=httpx2.MockTransport(self))


def read_timeout():
    return httpx2.ReadTimeout("timed out")


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def environment(monkeypatch):
    for name in (
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_COMPATIBLE_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)


@pytest.fixture(autouse=True)
def sleeps(monkeypatch):
    """Backoff delays are recorded, never slept."""
    delays: list[float] = []
    monkeypatch.setattr(llm_retry, "sleep", delays.append)
    return delays


def config_for(provider, max_retries=2, **llm):
    spec = f"{provider}/{MODELS[provider]}"
    tree = {"rewriter": spec, "chat": spec, "maxRetries": max_retries, **llm}
    if provider == "openai-compatible":
        tree.setdefault("baseUrl", LOCAL_URL)
    return get_config().with_overrides({"llm": tree})


def rewriter(provider, wire, **kwargs):
    client = client_for("rewriter", config_for(provider, **kwargs), http_client=wire.client())
    assert client is not None
    return client


def ask_json(client, schema=SCHEMA):
    return client.complete_json(component="rewriter", prompt="rewriter", variables=VARIABLES, schema=schema)


def counters():
    return counter_values("llm.")


# --- complete_json: answers ----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_structured_answer_is_parsed_and_returned(provider):
    wire = Wire(json_answer(provider, {"query": "price of the Lisbon flat"}))

    result = ask_json(rewriter(provider, wire))

    assert result == {"query": "price of the Lisbon flat"}
    assert counters() == {"llm.calls.rewriter": 1}


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_json_in_a_fenced_block_after_prose_is_parsed(provider):
    text = 'Sure! Here is the JSON:\n```json\n{"query": "price of the Lisbon flat"}\n```\nAnything else?'
    wire = Wire(text_answer(provider, text))

    assert ask_json(rewriter(provider, wire)) == {"query": "price of the Lisbon flat"}


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_json_falls_back_to_none_and_is_counted(provider):
    wire = Wire(text_answer(provider, '{"query": "price of the Lisbon flat",, }'))

    assert ask_json(rewriter(provider, wire)) is None
    assert counters()["llm.fallback.rewriter.invalid_json"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_truncated_answer_falls_back_even_when_it_parses(provider):
    if provider == "anthropic":
        partial = anthropic_message([tool_use({"query": "price of"})], stop_reason="max_tokens")
        wire = Wire(httpx2.Response(200, json=partial))
    else:
        wire = Wire(text_answer(provider, '{"query": "price of"}', finish="truncated"))

    assert ask_json(rewriter(provider, wire)) is None
    assert counters()["llm.fallback.rewriter.truncated"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refusal_falls_back(provider):
    wire = Wire(text_answer(provider, "I can't help with that.", finish="refusal"))

    assert ask_json(rewriter(provider, wire)) is None
    assert counters()["llm.fallback.rewriter.refusal"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_plain_prose_answer_without_json_counts_as_a_refusal(provider):
    wire = Wire(text_answer(provider, "I'd rather not rewrite personal messages."))

    assert ask_json(rewriter(provider, wire)) is None
    assert counters()["llm.fallback.rewriter.refusal"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_json_missing_a_required_key_or_of_the_wrong_type_falls_back(provider):
    wire = Wire(json_answer(provider, {"text": "price"}), json_answer(provider, {"query": 42}))
    client = rewriter(provider, wire)

    assert ask_json(client) is None
    assert ask_json(client) is None
    assert counters()["llm.fallback.rewriter.schema_mismatch"] == 2


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_body_that_is_not_the_provider_shape_falls_back_as_an_error(provider):
    wire = Wire(
        httpx2.Response(200, headers={"content-type": "text/html"}, content=b"<html>proxy error</html>")
    )

    assert ask_json(rewriter(provider, wire)) is None
    assert counters()["llm.fallback.rewriter.error"] == 1


# --- complete_json: retries ----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_429_is_retried_and_the_second_answer_is_used(provider, sleeps):
    wire = Wire(error_answer(provider, 429), json_answer(provider, {"query": "q"}))

    assert ask_json(rewriter(provider, wire)) == {"query": "q"}
    assert len(wire.requests) == 2
    assert len(sleeps) == 1
    assert counters()["llm.retries.rewriter"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_two_500s_then_success_is_within_max_retries(provider):
    wire = Wire(
        error_answer(provider, 500), error_answer(provider, 500), json_answer(provider, {"query": "q"})
    )

    assert ask_json(rewriter(provider, wire, max_retries=2)) == {"query": "q"}
    assert len(wire.requests) == 3
    assert "llm.fallback.rewriter.error" not in counters()


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_500s_beyond_max_retries_return_none_and_count_an_error(provider):
    wire = Wire(error_answer(provider, 500))

    assert ask_json(rewriter(provider, wire, max_retries=2)) is None
    assert len(wire.requests) == 3
    assert counters()["llm.fallback.rewriter.error"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_401_is_not_retried(provider, sleeps):
    wire = Wire(error_answer(provider, 401), json_answer(provider, {"query": "q"}))

    assert ask_json(rewriter(provider, wire)) is None
    assert len(wire.requests) == 1 and sleeps == []
    assert counters()["llm.fallback.rewriter.error"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_400_is_not_retried(provider):
    wire = Wire(error_answer(provider, 400))

    assert ask_json(rewriter(provider, wire)) is None
    assert len(wire.requests) == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_read_timeouts_are_retried_then_give_up(provider):
    wire = Wire(read_timeout())

    assert ask_json(rewriter(provider, wire, max_retries=1)) is None
    assert len(wire.requests) == 2
    assert counters()["llm.fallback.rewriter.error"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_timeout_then_an_answer_succeeds(provider):
    wire = Wire(read_timeout(), json_answer(provider, {"query": "q"}))

    assert ask_json(rewriter(provider, wire)) == {"query": "q"}
    assert len(wire.requests) == 2


@pytest.mark.django_db
def test_anthropic_overloaded_529_is_retried():
    wire = Wire(error_answer("anthropic", 529), json_answer("anthropic", {"query": "q"}))

    assert ask_json(rewriter("anthropic", wire)) == {"query": "q"}
    assert len(wire.requests) == 2


@pytest.mark.django_db
def test_retry_after_is_honoured_up_to_the_cap(sleeps):
    wire = Wire(
        error_answer("anthropic", 429, retry_after=3), error_answer("anthropic", 429, retry_after=120)
    )
    wire.answers.append(json_answer("anthropic", {"query": "q"}))

    assert ask_json(rewriter("anthropic", wire)) == {"query": "q"}
    assert sleeps[0] >= 3 and sleeps[1] == llm_retry.MAX_DELAY_SECONDS


def test_backoff_grows_exponentially_with_jitter_and_is_capped(monkeypatch):
    monkeypatch.setattr(llm_retry, "BASE_DELAY_SECONDS", 1.0)
    monkeypatch.setattr(llm_retry, "MAX_DELAY_SECONDS", 6.0)

    delays = [[llm_retry.backoff_delay(attempt) for _ in range(50)] for attempt in range(5)]

    assert all(0.5 <= d <= 1.0 for d in delays[0])
    assert all(1.0 <= d <= 2.0 for d in delays[1])
    assert all(2.0 <= d <= 4.0 for d in delays[2])
    assert all(3.0 <= d <= 6.0 for d in delays[3] + delays[4])
    assert len(set(delays[2])) > 1


# --- the requests we send --------------------------------------------------------------------


@pytest.mark.django_db
def test_anthropic_requests_force_the_schema_tool_with_model_key_and_token_limit():
    wire = Wire(json_answer("anthropic", {"query": "q"}))

    ask_json(rewriter("anthropic", wire, maxOutputTokens=300))

    request, body = wire.requests[0], wire.body
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    assert request.headers.get("x-api-key") == ANTHROPIC_KEY or (
        request.headers.get("authorization") == f"Bearer {ANTHROPIC_KEY}"
    )
    assert request.headers["anthropic-version"]
    assert body["model"] == MODELS["anthropic"] and body["max_tokens"] == 300
    assert body["tools"] == [
        {
            "name": "record_rewriter",
            "description": "Record the rewriter result as structured JSON.",
            "input_schema": SCHEMA,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "record_rewriter"}
    assert "how much was it?" in body["messages"][0]["content"]


@pytest.mark.django_db
def test_openai_requests_ask_for_strict_json_schema_with_model_and_key():
    wire = Wire(json_answer("openai", {"query": "q"}))

    ask_json(rewriter("openai", wire, maxOutputTokens=300))

    request, body = wire.requests[0], wire.body
    assert str(request.url) == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert body["model"] == MODELS["openai"] and body["max_completion_tokens"] == 300
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "record_rewriter", "schema": SCHEMA, "strict": True},
    }
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


@pytest.mark.django_db
def test_openai_gets_strict_false_for_a_schema_strict_mode_would_reject():
    wire = Wire(json_answer("openai", {"query": "q"}))
    loose = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}

    ask_json(rewriter("openai", wire), schema=loose)

    assert wire.body["response_format"]["json_schema"]["strict"] is False


@pytest.mark.django_db
def test_openai_compatible_requests_use_json_object_mode_the_base_url_and_a_placeholder_key():
    wire = Wire(json_answer("openai-compatible", {"query": "q"}))

    ask_json(rewriter("openai-compatible", wire, maxOutputTokens=300))

    request, body = wire.requests[0], wire.body
    assert str(request.url) == f"{LOCAL_URL}/chat/completions"
    assert request.headers["authorization"] == "Bearer not-needed"
    assert body["model"] == MODELS["openai-compatible"] and body["max_tokens"] == 300
    assert body["response_format"] == {"type": "json_object"}
    assert json.dumps(SCHEMA) in body["messages"][0]["content"]


@pytest.mark.django_db
def test_openai_compatible_sends_its_own_key_when_one_is_set(monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "local-secret")
    wire = Wire(json_answer("openai-compatible", {"query": "q"}))

    ask_json(rewriter("openai-compatible", wire))

    assert wire.requests[0].headers["authorization"] == "Bearer local-secret"


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_configured_timeout_reaches_the_sdk(provider):
    wire = Wire(json_answer(provider, {"query": "q"}))

    ask_json(rewriter(provider, wire, timeoutSeconds=12.0))

    assert float(wire.requests[0].headers["x-stainless-read-timeout"]) == 12.0


# --- complete_text and stream_text -----------------------------------------------------------


def chat_client(provider, wire, **kwargs):
    client = client_for("chat", config_for(provider, **kwargs), http_client=wire.client())
    assert client is not None
    return client


MESSAGES = [{"role": "user", "content": "Hello there"}]


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_complete_text_returns_the_answer(provider):
    wire = Wire(text_answer(provider, "Hi! How can I help?"))

    result = chat_client(provider, wire).complete_text(
        component="chat", system="Be brief.", messages=MESSAGES
    )

    assert result is not None and result.text == "Hi! How can I help?" and result.truncated is False
    if provider == "anthropic":
        assert wire.body["system"] == "Be brief." and wire.body["messages"] == MESSAGES
    else:
        assert wire.body["messages"] == [{"role": "system", "content": "Be brief."}, *MESSAGES]


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_complete_text_keeps_a_truncated_answer_and_flags_it(provider):
    wire = Wire(text_answer(provider, "Once upon a time", finish="truncated"))

    result = chat_client(provider, wire).complete_text(system="", messages=MESSAGES, max_tokens=5)

    assert result is not None and result.text == "Once upon a time" and result.truncated is True
    assert counters()["llm.truncated.chat"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_complete_text_returns_none_on_a_refusal_or_a_failure(provider):
    wire = Wire(
        text_answer(provider, "I can't help with that.", finish="refusal"), error_answer(provider, 401)
    )
    client = chat_client(provider, wire)

    assert client.complete_text(system="", messages=MESSAGES) is None
    assert client.complete_text(system="", messages=MESSAGES) is None
    assert counters()["llm.fallback.chat.refusal"] == 1 and counters()["llm.fallback.chat.error"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_text_yields_the_chunks_as_they_arrive(provider):
    wire = Wire(stream_answer(provider, ["Hel", "lo", " there"]))

    stream = chat_client(provider, wire).stream_text(system="Be brief.", messages=MESSAGES)
    chunks = list(stream)

    assert chunks == ["Hel", "lo", " there"]
    assert stream.text == "Hello there" and stream.failed is None and stream.truncated is False
    assert wire.body["stream"] is True


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_cut_by_the_token_limit_is_flagged_truncated(provider):
    wire = Wire(stream_answer(provider, ["Once", " upon"], finish="truncated"))

    stream = chat_client(provider, wire).stream_text(system="", messages=MESSAGES)
    list(stream)

    assert stream.truncated is True and stream.failed is None


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_opening_a_stream_is_retried_after_a_429(provider):
    wire = Wire(error_answer(provider, 429), stream_answer(provider, ["ok"]))

    stream = chat_client(provider, wire).stream_text(system="", messages=MESSAGES)

    assert list(stream) == ["ok"] and len(wire.requests) == 2


@pytest.mark.django_db
def test_an_error_event_mid_stream_ends_the_stream_without_raising():
    wire = Wire(stream_answer("anthropic", ["Hel", "lo", " there"], error_after=2))

    stream = chat_client("anthropic", wire).stream_text(system="", messages=MESSAGES)
    chunks = list(stream)

    assert chunks == ["Hel", "lo"] and stream.failed == "error"
    assert counters()["llm.fallback.chat.error"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_that_cannot_be_opened_yields_nothing_and_reports_the_failure(provider):
    wire = Wire(error_answer(provider, 401))

    stream = chat_client(provider, wire).stream_text(system="", messages=MESSAGES)

    assert list(stream) == [] and stream.failed == "error"


@pytest.mark.django_db
def test_anthropic_gets_system_turns_as_its_system_parameter_and_no_empty_one():
    wire = Wire(text_answer("anthropic", "ok"), text_answer("anthropic", "ok"))
    client = chat_client("anthropic", wire)
    turns = [{"role": "system", "content": "Memory: likes tea."}, *MESSAGES]

    client.complete_text(system="Be brief.", messages=turns)
    first = wire.body
    client.complete_text(system="", messages=MESSAGES)

    assert first["system"] == "Be brief.\n\nMemory: likes tea." and first["messages"] == MESSAGES
    assert "system" not in wire.body


# --- specs, clients, status ------------------------------------------------------------------


def test_parse_spec_reads_provider_model_and_base_url():
    assert parse_spec("none").is_none
    assert parse_spec("anthropic/claude-sonnet-4-5").model == "claude-sonnet-4-5"
    spec = parse_spec("openai-compatible/meta-llama/Llama-3.1-8B", LOCAL_URL)
    assert (spec.provider, spec.model, spec.base_url) == (
        "openai-compatible",
        "meta-llama/Llama-3.1-8B",
        LOCAL_URL,
    )
    assert parse_spec("openai/gpt-4.1", LOCAL_URL).base_url == ""


@pytest.mark.parametrize(
    "spec, base_url, says",
    [
        ("mistral/large", "", "unknown LLM provider"),
        ("anthropic", "", "names no model"),
        ("openai/", "", "names no model"),
        ("openai-compatible/qwen", "", "baseUrl"),
    ],
)
def test_a_malformed_spec_is_a_config_error_naming_the_key(spec, base_url, says):
    with pytest.raises(ConfigError) as error:
        parse_spec(spec, base_url, key="memory.llm.reflection")

    assert error.value.key == "memory.llm.reflection"
    assert says in str(error.value) and "memory.llm.reflection" in str(error.value)


def test_a_component_set_to_none_has_no_client():
    assert client_for("reflection", get_config()) is None


def test_client_for_raises_a_config_error_for_a_malformed_spec():
    config = get_config().with_overrides({"llm": {"reflection": "gemini/pro"}})

    with pytest.raises(ConfigError) as error:
        client_for("reflection", config)

    assert error.value.key == "memory.llm.reflection"


@pytest.mark.django_db
def test_a_missing_api_key_disables_the_component_and_is_counted(monkeypatch, caplog):
    monkeypatch.delenv("ANTHROPIC_API_KEY")

    client = client_for(
        "rewriter", config_for("anthropic"), http_client=Wire(json_answer("anthropic", {})).client()
    )

    assert client is None
    assert counters() == {"llm.fallback.rewriter.no_api_key": 1}
    assert "ANTHROPIC_API_KEY" in caplog.text


@pytest.mark.django_db
def test_an_installed_http_client_factory_is_used_when_none_is_passed():
    wire = Wire(json_answer("openai", {"query": "q"}))
    previous = set_http_client_factory(lambda spec: wire.client())
    try:
        client = client_for("rewriter", config_for("openai"))
        assert client is not None and ask_json(client) == {"query": "q"}
    finally:
        set_http_client_factory(previous)

    assert len(wire.requests) == 1


def test_provider_status_shows_each_component_without_revealing_keys(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    config = get_config().with_overrides(
        {
            "llm": {
                "reflection": "anthropic/claude-haiku-4-5",
                "rewriter": "openai/gpt-4.1-mini",
                "chat": "ollama/x",
            }
        }
    )

    rows = {row["component"]: row for row in provider_status(config)}

    assert list(rows) == [
        "reflection",
        "rewriter",
        "consolidation",
        "summaries",
        "chat",
        "applicability",
        "chunking",
        "revision",
        "consequences",
    ]
    assert rows["reflection"]["provider"] == "anthropic" and rows["reflection"]["model"] == "claude-haiku-4-5"
    assert rows["reflection"]["api_key"] == "ANTHROPIC_API_KEY set" and rows["reflection"]["problem"] == ""
    assert "OPENAI_API_KEY" in rows["rewriter"]["problem"]
    assert rows["consolidation"]["provider"] == "none"
    assert "unknown LLM provider" in rows["chat"]["problem"]
    assert ANTHROPIC_KEY not in json.dumps(rows)


# --- logs ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_prompt_or_answer_text_reaches_the_logs(provider, caplog):
    caplog.set_level(logging.DEBUG)
    secret = "my-diagnosis-is-confidential"
    wire = Wire(
        text_answer(provider, f"not json about {secret}, {{"),
        error_answer(provider, 500),
        json_answer(provider, {"text": secret}),
    )
    client = rewriter(provider, wire, max_retries=0)
    variables = {"history": f"- {secret}", "message": secret}

    for _ in range(3):
        assert (
            client.complete_json(component="rewriter", prompt="rewriter", variables=variables, schema=SCHEMA)
            is None
        )

    assert caplog.records and secret not in caplog.text
    assert any(
        "reason=invalid_json" in r.getMessage() and "component=rewriter" in r.getMessage()
        for r in caplog.records
    )


# --- templates and parsing -------------------------------------------------------------------


def test_every_component_prompt_exists_with_its_schema():
    assert {"reflection", "rewriter", "consolidation"} <= set(prompt_names())
    for name in prompt_names():
        assert prompt_schema(name)["type"] == "object"


@pytest.mark.parametrize("name", ["reflection", "rewriter", "consolidation"])
def test_a_template_renders_its_variables_and_keeps_its_json_braces(name):
    variables = {key: f"<<{key} value>>" for key in template_variables(name)}

    text = render_prompt(name, variables)

    assert all(f"<<{key} value>>" in text for key in variables)
    assert "$" not in text and "{" in text and "}" in text


@pytest.mark.parametrize("name", ["reflection", "rewriter", "consolidation"])
def test_the_example_answer_in_each_prompt_matches_its_schema_which_strict_mode_accepts(name):
    text = render_prompt(name, {key: "" for key in template_variables(name)})
    example = extract_json(text[text.rindex(f"{name}.schema.json") :])

    assert example is not None and schema_problem(example, prompt_schema(name)) is None
    assert strict_compatible(prompt_schema(name))


def test_the_rewriter_prompt_takes_what_the_rewriter_passes():
    assert template_variables("rewriter") == {"history", "message"}


def test_a_missing_template_variable_is_named():
    with pytest.raises(ValueError, match="message"):
        render_prompt("rewriter", {"history": ""})


def test_non_string_variables_are_rendered_as_json():
    text = render_prompt("rewriter", {"history": ["a", "b"], "message": {"q": 1}})

    assert '"a"' in text and '"q": 1' in text


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('<think>the user wants {x}</think>\n{"a": 1}', {"a": 1}),
        ('Use {name} like this: {"a": {"b": [1, 2]}} — done.', {"a": {"b": [1, 2]}}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ("[1, 2]", None),
        ("", None),
    ],
)
def test_extract_json_finds_the_first_object(text, expected):
    assert extract_json(text) == expected


def json_mode_refusal(status=400):
    body = {"error": {"message": "response_format of type json_object is not supported", "type": "invalid"}}
    return httpx2.Response(status, json=body)


@pytest.mark.django_db
@pytest.mark.parametrize("status", [400, 422])
def test_a_compatible_server_refusing_json_mode_is_asked_once_more_without_it(status):
    wire = Wire(json_mode_refusal(status), text_answer("openai-compatible", '{"query": "q"}'))
    client = rewriter("openai-compatible", wire)

    assert ask_json(client) == {"query": "q"}
    assert ask_json(client) == {"query": "q"}  # the same client does not offer it again

    sent = [json.loads(r.content) for r in wire.requests]
    assert ["response_format" in body for body in sent] == [True, False, False]
    assert counters()["llm.json_mode_refused"] == 1


@pytest.mark.django_db
def test_openai_itself_refusing_response_format_is_not_asked_without_it():
    wire = Wire(json_mode_refusal(), json_answer("openai", {"query": "q"}))

    assert ask_json(rewriter("openai", wire)) is None
    assert len(wire.requests) == 1 and counters()["llm.fallback.rewriter.error"] == 1


@pytest.mark.django_db
def test_an_unrelated_400_from_a_compatible_server_is_not_retried_without_json_mode():
    wire = Wire(error_answer("openai-compatible", 400), text_answer("openai-compatible", '{"query": "q"}'))

    assert ask_json(rewriter("openai-compatible", wire)) is None
    assert len(wire.requests) == 1
