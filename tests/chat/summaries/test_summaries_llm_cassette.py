"""The session-summary pipeline's LLM path on a labelled subset, replayed from a recording of a
local model (tests/data/llm_cassettes/summaries_local_kitchen.json, written by
`manage.py summaries_eval --record`; its `about` says what served it): the real SDK, provider,
parsing and pipeline code read the bodies that server returned, and the capture must be the one
the recording run printed.

Two recordings: the kitchen-reno subset (tests/data/session_summaries/llm_subset.json, its 3
conversations and the project's items as they are in sessions.json) and the whole development
set (summaries_local_full: 15 calls in 28 minutes at about 6 tokens a second)."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

from chat.summaries.evaluation import load_set
from memory.models import App, DocumentKind, JobRun, MemoryDocument, MemoryDocumentVersion, SessionExtraction
from memoryweb.llm import set_http_client_factory
from tests.llm_cassette import Cassette

DATA = Path(__file__).resolve().parents[2] / "data" / "session_summaries"
SPEC = "openai-compatible/qwen2.5-coder-1.5b-instruct"
BASE_URL = "http://127.0.0.1:8765/v1"  # where the recording's server listened; nothing listens in a test
# the output limits the recording ran with (kept low for a CPU), so the requests are the same
CONFIG = {
    "llm": {"maxRetries": 0},
    "memories": {"stageOneOutputTokens": 600, "consolidationOutputTokens": 900},
}


@dataclass(frozen=True)
class Recording:
    """One recorded run: what the recording run printed (summaries_eval --provider SPEC --data
    DATA --config CONFIG --record …, on 2026-12-01; docs/local-models.md has the command): per
    kind, (n, extraction, documents, summary, skill) as (captured, of) pairs, None for "-"."""

    cassette: str
    data: Path
    table: dict
    distractors: dict
    methods: dict
    skills: list
    version_methods: frozenset = frozenset({SPEC})  # "heuristic" too where an answer was truncated


KITCHEN = Recording(
    cassette="summaries_local_kitchen",
    data=DATA / "llm_subset.json",
    table={
        "decision": (3, (1, 2), (0, 3), (0, 3), None),
        "constraint": (5, (1, 3), (0, 5), (0, 5), None),
        "failure_fix": (1, (1, 1), (0, 1), (0, 1), None),
        "workflow": (4, (2, 3), (0, 4), (0, 4), (0, 1)),
        "tool": (1, (1, 1), (0, 1), (0, 1), None),
        "preference": (2, (0, 2), (0, 2), (0, 2), None),
        "open_question": (2, (0, 1), (0, 2), (0, 2), None),
        "total": (18, (6, 13), (0, 18), (0, 18), (0, 1)),
    },
    distractors={"extraction": (0, 2), "documents": (0, 3), "summary": (0, 3)},
    methods={SPEC: 3},
    # the 1.5B model copied the consolidation prompt's example: a release skill, nothing of the kitchen
    skills=[("", "test-checklist"), ("kitchen-reno", "release-checklist")],
)
# the whole development set: 11 stage-one calls, 4 consolidations, 2 of them cut at the output
# limit (the subject-wide and the tidewater scopes), which those scopes' heuristic path composed
FULL = Recording(
    cassette="summaries_local_full",
    data=DATA / "sessions.json",
    table={
        "decision": (15, (1, 11), (5, 15), (1, 15), None),
        "constraint": (16, (6, 12), (8, 16), (2, 16), None),
        "failure_fix": (7, (1, 6), (2, 6), (2, 6), None),
        "workflow": (13, (0, 9), (0, 13), (0, 13), (0, 4)),
        "tool": (5, (2, 5), (2, 5), (1, 5), None),
        "preference": (7, (0, 6), (0, 7), (0, 7), None),
        "open_question": (6, (1, 4), (1, 5), (1, 5), None),
        "total": (69, (11, 53), (18, 67), (7, 67), (0, 4)),
    },
    distractors={"extraction": (0, 4), "documents": (0, 10), "summary": (0, 10)},
    methods={SPEC: 11},
    skills=[
        ("", "budget-checklist"),
        ("", "deployment-review"),
        ("", "migration-workflow"),
        ("", "performance-tuning"),
        ("", "release-checklist"),
        ("/srv/etl/tidewater", "performance-tuning"),
        ("kitchen-reno", "kitchen-planning"),
        ("kitchen-reno", "release-checklist"),
        ("ledger-api", "release-checklist"),
        ("ledger-api", "versioning"),
    ],
    version_methods=frozenset({SPEC, "heuristic"}),
)
RECORDINGS = [KITCHEN, FULL]


@pytest.fixture(params=RECORDINGS, ids=lambda r: r.cassette)
def recording(request):
    return request.param


@pytest.fixture
def cassette(recording):
    recorded = Cassette(recording.cassette)
    previous = set_http_client_factory(lambda spec: recorded.client())
    yield recorded
    set_http_client_factory(previous)


def _replay(tmp_path, recording) -> dict:
    out = tmp_path / "capture.json"
    call_command(
        "summaries_eval",
        "--data",
        str(recording.data),
        "--provider",
        SPEC,
        "--base-url",
        BASE_URL,
        "--timeout",
        "1500",
        "--config",
        json.dumps(CONFIG),
        "--json",
        str(out),
    )
    return json.loads(out.read_text())


def _table(by_kind: dict) -> dict:
    def pair(cell: dict):
        return (cell["captured"], cell["of"]) if cell["of"] else None

    return {
        kind: (row["n"], *(pair(row[c]) for c in ("extraction", "documents", "summary", "skill")))
        for kind, row in by_kind.items()
    }


def test_the_replayed_recording_captures_what_the_recording_run_printed(db, tmp_path, recording, cassette):
    scores = _replay(tmp_path, recording)

    assert cassette.unmatched == [], "a request had no recorded answer"
    # every recorded exchange answered a request of the replay, each once
    assert sorted(cassette.played) == sorted(i["name"] for i in cassette.interactions)
    assert _table(scores["by_kind"]) == recording.table
    distractors = scores["distractors"]
    assert {k: (v["captured"], v["of"]) for k, v in distractors.items()} == recording.distractors
    assert scores["secrets_leaked"] == 0
    assert scores["run"]["methods"] == recording.methods


def test_the_extractions_and_documents_the_model_wrote_carry_its_spec(db, tmp_path, recording, cassette):
    _replay(tmp_path, recording)

    app = App.objects.get(name__startswith="summaries-eval-")
    extractions = SessionExtraction.objects.filter(subject__app=app)
    labelled = {c["id"] for c in load_set(recording.data)["conversations"]}
    assert {e.conversation.external_id for e in extractions} == labelled
    by_method = {}
    for extraction in extractions:
        by_method[extraction.method] = by_method.get(extraction.method, 0) + 1
    assert by_method == recording.methods
    assert JobRun.objects.get(subject__app=app).status == "done"
    versions = MemoryDocumentVersion.objects.filter(document__subject__app=app)
    assert {v.method for v in versions} == recording.version_methods
    skills = MemoryDocument.objects.filter(subject__app=app, kind=DocumentKind.SKILL)
    assert sorted((d.scope, d.name) for d in skills) == recording.skills
    sent = cassette.requests[0]
    assert sent["model"] == SPEC.split("/", 1)[1] and sent["max_tokens"] == 600
