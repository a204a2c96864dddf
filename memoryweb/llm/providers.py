"""The two SDKs behind one shape: send a request, read the answer into a `Completion`.

`send_*` calls the SDK (and may raise its errors; the caller retries). `read` never raises: it
turns whatever came back — including a body that is not the documented shape — into a
`Completion` whose `finish` says whether the answer is complete, truncated or a refusal.

- Anthropic: JSON through a forced tool (`tools=[{input_schema}]`, `tool_choice={"type":
  "tool"}`), read from the `tool_use` block; `stop_reason` `max_tokens` means truncated,
  `refusal` a refusal.
- OpenAI: JSON through `response_format` `json_schema` (strict when the schema allows it);
  `finish_reason` `length` means truncated, `message.refusal` or `content_filter` a refusal.
- openai-compatible (llama.cpp, Ollama, vLLM): `json_object` mode, which they mostly support
  where `json_schema` is patchy, with the schema spelled out in the system message, and
  `max_tokens` instead of `max_completion_tokens`. A server that refuses `response_format`
  with a 400 or 422 naming it (LM Studio takes only `json_schema`; some proxies none) is
  asked again without it, and not offered it again by this provider: the prompt already asks
  for one JSON object and the answer is read defensively (memoryweb/llm/parsing.py).
"""

import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
import openai
from pydantic import BaseModel

from memoryweb.counters import counter_add
from memoryweb.llm.parsing import strict_compatible
from memoryweb.llm.spec import ANTHROPIC, OPENAI_COMPATIBLE, LLMSpec

logger = logging.getLogger(__name__)

COMPLETE = "complete"
TRUNCATED = "truncated"
REFUSAL = "refusal"

ANTHROPIC_FINISH = {"max_tokens": TRUNCATED, "model_context_window_exceeded": TRUNCATED, "refusal": REFUSAL}
OPENAI_FINISH = {"length": TRUNCATED, "content_filter": REFUSAL}
JSON_MODE_WORDS = ("response_format", "json_object")


def _refuses_json_mode(exc: openai.APIStatusError) -> bool:
    """A 400/422 whose error names the JSON mode: the server does not support it."""
    if exc.status_code not in (400, 422):
        return False
    # the SDK keeps only a dict's "message" in str(exc); LM Studio's error is a bare string
    said = f"{exc} {exc.response.text}".lower()
    return any(word in said for word in JSON_MODE_WORDS)


@dataclass
class Completion:
    text: str = ""
    structured: dict | None = None  # the forced tool's input (Anthropic)
    finish: str = COMPLETE
    malformed: bool = False  # the body was not the provider's documented shape


def _as_dict(response: Any) -> dict | None:
    if isinstance(response, BaseModel):
        return response.model_dump()
    return response if isinstance(response, dict) else None


def _tool_name(prompt: str) -> str:
    return "record_" + re.sub(r"[^a-zA-Z0-9_-]", "_", prompt)[:56]


def _chat_messages(messages: Iterable[dict]) -> tuple[list[str], list[dict]]:
    """Split off system turns (Anthropic takes them as a parameter) from user/assistant ones."""
    system, turns = [], []
    for message in messages:
        if message.get("role") == "system":
            system.append(str(message.get("content", "")))
        else:
            turns.append({"role": message["role"], "content": message["content"]})
    return system, turns


class AnthropicProvider:
    def __init__(self, spec: LLMSpec, *, api_key: str, http_client: httpx2.Client, timeout: float):
        self.spec = spec
        self.sdk = anthropic.Anthropic(
            api_key=api_key,
            base_url=spec.base_url or None,
            timeout=httpx2.Timeout(timeout, connect=min(5.0, timeout)),
            max_retries=0,
            http_client=http_client,
        )

    def send_json(self, *, system: str, prompt: str, name: str, schema: dict, max_tokens: int) -> Any:
        tool = _tool_name(name)
        return self.sdk.messages.create(
            model=self.spec.model,
            max_tokens=max_tokens,
            system=system + f"\nRecord your answer by calling the {tool} tool exactly once.",
            messages=[{"role": "user", "content": prompt}],
            tools=[
                {
                    "name": tool,
                    "description": f"Record the {name} result as structured JSON.",
                    "input_schema": schema,
                }
            ],
            tool_choice={"type": "tool", "name": tool},
        )

    def _text_params(self, system: str, messages: list[dict], max_tokens: int) -> dict[str, Any]:
        extra_system, turns = _chat_messages(messages)
        params: dict[str, Any] = {"model": self.spec.model, "max_tokens": max_tokens, "messages": turns}
        system_text = "\n\n".join([system, *extra_system]).strip()
        if system_text:  # the API rejects an empty system prompt
            params["system"] = system_text
        return params

    def send_text(self, *, system: str, messages: list[dict], max_tokens: int) -> Any:
        return self.sdk.messages.create(**self._text_params(system, messages, max_tokens))

    def open_stream(self, *, system: str, messages: list[dict], max_tokens: int) -> Any:
        return self.sdk.messages.create(**self._text_params(system, messages, max_tokens), stream=True)

    def read(self, response: Any) -> Completion:
        data = _as_dict(response)
        content = data.get("content") if data else None
        if not isinstance(content, list):
            return Completion(malformed=True)
        text = "".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
        structured = next(
            (
                block["input"]
                for block in content
                if isinstance(block, dict)
                and block.get("type") == "tool_use"
                and isinstance(block.get("input"), dict)
            ),
            None,
        )
        finish = ANTHROPIC_FINISH.get(str(data.get("stop_reason") if data else ""), COMPLETE)
        return Completion(text=text, structured=structured, finish=finish)

    def stream_pieces(self, stream: Any) -> Iterator[tuple[str, str]]:
        """("text", chunk) for every text delta, then ("finish", complete|truncated|refusal)."""
        finish = COMPLETE
        for event in stream:
            kind = getattr(event, "type", "")
            if kind == "content_block_delta":
                delta = getattr(event, "delta", None)
                if getattr(delta, "type", "") == "text_delta" and getattr(delta, "text", ""):
                    yield "text", delta.text  # type: ignore[union-attr]
            elif kind == "message_delta":
                reason = getattr(getattr(event, "delta", None), "stop_reason", None)
                finish = ANTHROPIC_FINISH.get(str(reason), COMPLETE)
        yield "finish", finish


class OpenAIProvider:
    """OpenAI proper and OpenAI-compatible servers (`spec.provider` tells them apart)."""

    def __init__(self, spec: LLMSpec, *, api_key: str, http_client: httpx2.Client, timeout: float):
        self.spec = spec
        self.compatible = spec.provider == OPENAI_COMPATIBLE
        self.json_mode = True  # set False when a compatible server refuses response_format
        self.sdk = openai.OpenAI(
            api_key=api_key,
            base_url=spec.base_url or None,
            timeout=httpx2.Timeout(timeout, connect=min(5.0, timeout)),
            max_retries=0,
            http_client=http_client,
        )

    def _limit(self, max_tokens: int) -> dict[str, int]:
        # OpenAI's reasoning models reject max_tokens; many local servers ignore its successor.
        return {"max_tokens" if self.compatible else "max_completion_tokens": max_tokens}

    def send_json(self, *, system: str, prompt: str, name: str, schema: dict, max_tokens: int) -> Any:
        if self.compatible:
            system += "\nThe JSON object must validate against this JSON Schema:\n" + json.dumps(schema)
            response_format: dict[str, Any] = {"type": "json_object"}
        else:
            response_format = {
                "type": "json_schema",
                "json_schema": {
                    "name": _tool_name(name),
                    "schema": schema,
                    "strict": strict_compatible(schema),
                },
            }
        params: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            **self._limit(max_tokens),
        }
        if not self.json_mode:
            return self.sdk.chat.completions.create(**params)
        try:
            return self.sdk.chat.completions.create(**params, response_format=response_format)  # type: ignore[call-overload]
        except openai.APIStatusError as exc:
            if not (self.compatible and _refuses_json_mode(exc)):
                raise
        self.json_mode = False
        logger.warning("llm: model=%s refused response_format; asking without it", self.spec)
        counter_add("llm.json_mode_refused")
        return self.sdk.chat.completions.create(**params)

    def _text_params(self, system: str, messages: list[dict], max_tokens: int) -> dict[str, Any]:
        extra_system, turns = _chat_messages(messages)
        system_text = "\n\n".join([system, *extra_system]).strip()
        head = [{"role": "system", "content": system_text}] if system_text else []
        return {"model": self.spec.model, "messages": head + turns, **self._limit(max_tokens)}

    def send_text(self, *, system: str, messages: list[dict], max_tokens: int) -> Any:
        return self.sdk.chat.completions.create(**self._text_params(system, messages, max_tokens))

    def open_stream(self, *, system: str, messages: list[dict], max_tokens: int) -> Any:
        return self.sdk.chat.completions.create(
            **self._text_params(system, messages, max_tokens), stream=True
        )

    def read(self, response: Any) -> Completion:
        data = _as_dict(response)
        choices = data.get("choices") if data else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return Completion(malformed=True)
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            message = {}
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if message.get("refusal"):
            return Completion(text=text, finish=REFUSAL)
        return Completion(text=text, finish=OPENAI_FINISH.get(str(choice.get("finish_reason")), COMPLETE))

    def stream_pieces(self, stream: Any) -> Iterator[tuple[str, str]]:
        finish = COMPLETE
        for chunk in stream:
            for choice in getattr(chunk, "choices", None) or []:
                delta = getattr(choice, "delta", None)
                if getattr(delta, "refusal", None):
                    finish = REFUSAL
                text = getattr(delta, "content", None)
                if isinstance(text, str) and text:
                    yield "text", text
                reason = getattr(choice, "finish_reason", None)
                if reason and finish != REFUSAL:
                    finish = OPENAI_FINISH.get(str(reason), COMPLETE)
        yield "finish", finish


Provider = AnthropicProvider | OpenAIProvider


def provider_for(spec: LLMSpec, *, api_key: str, http_client: httpx2.Client, timeout: float) -> Provider:
    cls = AnthropicProvider if spec.provider == ANTHROPIC else OpenAIProvider
    return cls(spec, api_key=api_key, http_client=http_client, timeout=timeout)
