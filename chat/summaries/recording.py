"""Recording the summaries model's HTTP exchanges as a cassette (`summaries_eval --record`).

`CassetteRecorder` is an httpx2 transport that forwards every request to the real server and
keeps the exchange; `install` makes every LLM client use it (memoryweb.llm.client's
`set_http_client_factory`). `cassette` gives them in the format tests/llm_cassette.py replays:
each interaction's `match` is a piece of its request's last user message found in no other
recorded request's, taken first from the labelled messages' own text (stable from one run to
the next, unlike database ids), else from the request's lines (for the consolidation calls:
lines of the recorded stage-one answers, which a replay reproduces). A piece naming a database
row by its id is never taken: a replay's rows have other ids.
"""

import json
import re
from pathlib import Path

import httpx2

from memoryweb.llm.client import set_http_client_factory

SNIPPET = 60  # characters of a labelled message tried as a match
# a line naming a row by its primary key ("c:12 …", "— conversation 12") differs in a replay's database
DATABASE_ID = re.compile(r"\b(?:c:|conversation )\d+\b")


def _user_text(body: dict) -> str:
    return next(
        (m.get("content") or "" for m in reversed(body.get("messages", [])) if m["role"] == "user"), ""
    )


def _snippets(text: str) -> list[str]:
    """Pieces of a labelled message that survive being JSON-encoded inside a prompt."""
    pieces = []
    for part in text.replace("\\", "\n").replace('"', "\n").splitlines():
        part = part.strip()
        if len(part) >= 24:
            pieces.append(part[:SNIPPET])
    return pieces


class CassetteRecorder(httpx2.BaseTransport):
    def __init__(self, known_texts: list[str] | None = None):
        self.real = httpx2.HTTPTransport()
        self.exchanges: list[dict] = []
        self.known = [s for text in known_texts or [] for s in _snippets(text)]

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.real.handle_request(request)
        response.read()
        body = json.loads(request.content or b"{}")
        try:
            answer = response.json()
        except ValueError:
            answer = {"text": response.text}
        self.exchanges.append(
            {
                "user": _user_text(body),
                "response_format": "response_format" in body,
                "response": {
                    "status": response.status_code,
                    "headers": {"content-type": response.headers.get("content-type", "application/json")},
                    "body": answer,
                },
            }
        )
        return response

    def install(self):
        """Route every LLM client through this recorder; returns the previous factory."""
        return set_http_client_factory(lambda spec: httpx2.Client(transport=self))

    def _match(self, index: int) -> str:
        user = self.exchanges[index]["user"]
        others = [e["user"] for i, e in enumerate(self.exchanges) if i != index]
        lines = [line.strip() for line in user.splitlines() if len(line.strip()) >= 24]
        candidates = [c for c in [s for s in self.known if s in user] + lines if not DATABASE_ID.search(c)]
        if not candidates:
            return user
        # the first found in no other request; when the same request was asked twice (two scopes
        # composed from the same extractions), the first found in the fewest, and the replay
        # answers such requests in the order they were recorded
        return min(candidates, key=lambda c: sum(c in other for other in others))

    def cassette(self, about: str = "") -> dict:
        interactions = []
        for index, exchange in enumerate(self.exchanges):
            interactions.append(
                {
                    "name": f"summaries-{index + 1:03d}",
                    "match": self._match(index),
                    "response_format": exchange["response_format"],
                    "response": exchange["response"],
                    "origin": "recorded",
                }
            )
        return {"about": about, "interactions": interactions}

    def write(self, path: Path, about: str = "") -> None:
        path.write_text(json.dumps(self.cassette(about), indent=1, ensure_ascii=False) + "\n")
