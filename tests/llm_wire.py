"""A fake LLM provider on the wire: the real SDKs talk to an httpx2.MockTransport that answers
the way OpenAI's chat.completions endpoint does. The `openai_wire` fixture (conftest) plugs it in."""

import json

import httpx2


def openai_completion(content: str, finish_reason: str = "stop") -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def anthropic_tool_message(name: str, tool_input: dict, *, output_tokens: int = 40) -> dict:
    """An Anthropic messages answer that calls the tool `name` with `tool_input` (the way the
    structured-output requests are answered)."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": name, "input": tool_input}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": output_tokens},
    }


class Wire:
    """Answers each request with the next queued (status, body); records what was sent."""

    def __init__(self):
        self.answers: list = []
        self.requests: list[dict] = []
        self.on_request = None

    def answer_json(self, payload: dict):
        self.answers.append((200, openai_completion(json.dumps(payload))))

    def answer_text(self, text: str, finish_reason: str = "stop"):
        self.answers.append((200, openai_completion(text, finish_reason)))

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        if self.on_request:
            self.on_request(request)
        status, body = (
            self.answers.pop(0) if self.answers else (500, {"error": {"message": "no answer queued"}})
        )
        return httpx2.Response(status, json=body)
