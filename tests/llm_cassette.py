"""Replays recorded OpenAI-compatible chat.completions exchanges (tests/data/llm_cassettes/*.json)
over an httpx2 transport, so the real SDK, provider and parsing code run on real-shaped bodies.

A cassette is {"about": …, "interactions": [...]}; each interaction has a `name`, a `match`
(text the request's user message must contain — the labelled message it was recorded for —
looked for inside its <conversation> block, or in the whole message when it has none, as the
summaries' consolidation prompt),
optionally `response_format` (true/false: whether the request must carry one), and either a
`response` ({"status", "headers", "body"}) or `raise` (the name of an httpx2 exception, e.g.
"ReadTimeout", for a server that never answers). A request no interaction matches gets a 500
and is kept in `unmatched`, so a test can tell a missing recording from a model failure.
When several interactions match a request, the first not played yet answers it.
"""

import json
import re
from datetime import datetime
from pathlib import Path

import httpx2

CASSETTES = Path(__file__).resolve().parent / "data" / "llm_cassettes"
CONVERSATION = re.compile(r"<conversation>\n(.*?)\n</conversation>", re.DOTALL)


def load_cassette(name: str) -> dict:
    return json.loads((CASSETTES / f"{name}.json").read_text())


class Cassette:
    def __init__(self, name: str | dict):
        """`name`: a cassette of tests/data/llm_cassettes, or a cassette's content itself."""
        self.data = name if isinstance(name, dict) else load_cassette(name)
        self.interactions: list[dict] = self.data["interactions"]
        self.requests: list[dict] = []
        self.played: list[str] = []
        self.unmatched: list[str] = []

    def interaction(self, name: str) -> dict:
        return next(i for i in self.interactions if i["name"] == name)

    def _find(self, body: dict) -> dict | None:
        user = next((m["content"] for m in reversed(body.get("messages", [])) if m["role"] == "user"), "")
        block = CONVERSATION.search(user)
        conversation = block.group(1) if block else user
        matching = []
        for interaction in self.interactions:
            if interaction["match"] not in conversation:
                continue
            wants_format = interaction.get("response_format")
            if wants_format is not None and wants_format != ("response_format" in body):
                continue
            matching.append(interaction)
        # the same request asked twice (two scopes composed from the same extractions) gets the
        # answers in the order they were recorded; once all are played, the first again
        unplayed = [i for i in matching if i.get("name") not in self.played]
        return (unplayed or matching or [None])[0]

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        interaction = self._find(body)
        if interaction is None:
            self.unmatched.append(request.url.path)
            return httpx2.Response(500, json={"error": {"message": "no recorded interaction matches"}})
        self.played.append(interaction["name"])
        if "raise" in interaction:
            raise getattr(httpx2, interaction["raise"])(
                "recorded: the server did not answer", request=request
            )
        response = interaction["response"]
        return httpx2.Response(
            response["status"], headers=response.get("headers", {}), json=response["body"], request=request
        )

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))


class Recorder:
    """A transport that forwards to a real server and keeps every exchange as an interaction;
    `record_cases` below uses it to write a cassette (run it from `manage.py shell`)."""

    def __init__(self):
        self.real = httpx2.HTTPTransport()
        self.interactions: list[dict] = []
        self.match = ""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.real.handle_request(request)
        response.read()
        body = json.loads(request.content)
        self.interactions.append(
            {
                "match": self.match,
                "response_format": "response_format" in body,
                "response": {
                    "status": response.status_code,
                    "headers": {"content-type": response.headers.get("content-type", "application/json")},
                    "body": response.json(),
                },
            }
        )
        return response


def record_cases(*, spec: str, base_url: str, case_ids: list[str], out: Path, timeout: float = 300.0) -> None:
    """Ask a running server about the labelled cases `case_ids` through reflection's LLM path
    and write what it answered as a cassette (its interactions named after the cases)."""
    from chat.reflection.evaluation import load_cases
    from chat.reflection.model_extraction import ModelExtractor
    from memory.config import get_config
    from memoryweb.llm import client_for

    config = get_config().with_overrides(
        {"llm": {"reflection": spec, "baseUrl": base_url, "timeoutSeconds": timeout, "maxRetries": 0}}
    )
    recorder = Recorder()
    client = client_for("reflection", config, http_client=httpx2.Client(transport=recorder))
    extractor = ModelExtractor(client, config)
    reference, cases = load_cases()
    for case in (c for c in cases if c["id"] in case_ids):
        recorder.match = case["text"]
        when = datetime.fromisoformat(case["occurred_at"]) if "occurred_at" in case else reference
        extractor(case["text"], role=case.get("role", "user"), occurred_at=when)
        for interaction in recorder.interactions:  # a call that timed out recorded nothing
            interaction.setdefault("name", case["id"])
    out.write_text(
        json.dumps({"about": "", "interactions": recorder.interactions}, indent=2, ensure_ascii=False) + "\n"
    )
