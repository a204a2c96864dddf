"""Recording a model's HTTP exchanges as a cassette (`summaries_eval --record`,
`extraction_eval --record`).

`CassetteRecorder` is an httpx2 transport that forwards every request to the real server and
keeps the exchange (a request the server never answered in time is kept as the exception it
raised, which the replay raises again); `install` makes every LLM client use it (memoryweb.llm.client's
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
CONVERSATION = re.compile(r"<conversation>\n(.*?)\n</conversation>", re.DOTALL)  # as tests/llm_cassette.py


def _user_text(body: dict) -> str:
    return next(
        (m.get("content") or "" for m in reversed(body.get("messages", [])) if m["role"] == "user"), ""
    )


def _conversation(user: str) -> str:
    block = CONVERSATION.search(user)
    return block.group(1) if block else user


def _snippets(text: str) -> list[str]:
    """Pieces of a labelled message that survive being JSON-encoded inside a prompt."""
    pieces = []
    for part in text.replace("\\", "\n").replace('"', "\n").splitlines():
        part = part.strip()
        if len(part) >= 24:
            pieces.append(part[:SNIPPET])
    return pieces


class CassetteRecorder(httpx2.BaseTransport):
    def __init__(self, known_texts: list[str] | None = None, *, name: str = "summaries"):
        self.real = httpx2.HTTPTransport()
        self.exchanges: list[dict] = []
        self.known = [s for text in known_texts or [] for s in _snippets(text)]
        self.name = name  # the interactions are named NAME-001, NAME-002, …

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content or b"{}")
        try:
            response = self.real.handle_request(request)
            response.read()
        except httpx2.TransportError as exc:  # a timeout, a refused connection
            exchange = {"user": _user_text(body), "response_format": "response_format" in body}
            self.exchanges.append({**exchange, "raise": type(exc).__name__})
            raise
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

        def pieces(text: str) -> list[str]:
            lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 24]
            return [c for c in [s for s in self.known if s in text] + lines if not DATABASE_ID.search(c)]

        # the replay looks inside the request's <conversation> block when it has one: a piece of
        # it first (the reflection prompt's "Current time" line, outside it, differs per message too)
        block = _conversation(user)
        candidates = (pieces(block) if block != user else []) or pieces(user)
        if not candidates:
            return user
        # the first found in no other request; when the same request was asked twice (two scopes
        # composed from the same extractions), the first found in the fewest, and the replay
        # answers such requests in the order they were recorded
        return min(candidates, key=lambda c: sum(c in other for other in others))

    def cassette(self, about: str = "") -> dict:
        interactions = []
        for index, exchange in enumerate(self.exchanges):
            answer = (
                {"raise": exchange["raise"]} if "raise" in exchange else {"response": exchange["response"]}
            )
            interactions.append(
                {
                    "name": f"{self.name}-{index + 1:03d}",
                    "match": self._match(index),
                    "response_format": exchange["response_format"],
                    **answer,
                    "origin": "recorded",
                }
            )
        return {"about": about, "interactions": interactions}

    def write(self, path: Path, about: str = "") -> None:
        path.write_text(json.dumps(self.cassette(about), indent=1, ensure_ascii=False) + "\n")


def add_record_arguments(parser) -> None:
    """`--record CASSETTE` and `--about TEXT`, the options of an eval command that can keep its
    exchanges with a model as a cassette (summaries_eval, extraction_eval)."""
    parser.add_argument(
        "--about",
        default="",
        metavar="TEXT",
        help="with --record: what served the model (server, version, weights), said in the cassette",
    )
    parser.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="CASSETTE",
        help="with a model: save every exchange with it as a cassette (tests/llm_cassette.py format)",
    )
