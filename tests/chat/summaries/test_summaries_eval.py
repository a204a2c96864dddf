"""The session-summary scorer (chat/summaries/evaluation.py) on documents written by hand, and the
pipeline's capture of the whole labelled set."""

import json

import httpx2
import pytest
from django.core.management import call_command

from chat.summaries.evaluation import (
    DEFAULT_DATA,
    KINDS,
    app_config,
    captured_in,
    distractor_in,
    evaluate,
    load_set,
    measure,
    set_load,
    set_scopes,
    steps_in,
)
from chat.summaries.recording import CassetteRecorder
from memory.documents import MEMORY_MD, SUMMARY_MD, skill_path
from memory.models import App, Conversation, Message
from memory.services import app_create
from memory.services.documents import document_write
from tests.llm_cassette import Cassette

# set by the lead from the first measured run (fractions of the labelled items captured)
HEURISTIC_DOCUMENTS_FLOOR = 0.9  # measured 63/67 = 0.94
HEURISTIC_SUMMARY_FLOOR = 0.8  # measured 56/67 = 0.84
HEURISTIC_SKILL_FLOOR = 0.95  # measured 4/4


def _set(items, distractors=(), secrets=()):
    return {
        "conversations": [],
        "projects": [{"scope": "ledger-api", "expected": list(items), "distractors": list(distractors)}],
        "secrets": list(secrets),
    }


RELEASE = {
    "id": "release",
    "kind": "workflow",
    "scope": "ledger-api",
    "text": "The release procedure.",
    "keywords": [["release"], ["healthz"]],
    "steps": [["pyproject"], ["make check"], ["tag"], ["healthz"]],
}
CENTS = {
    "id": "cents",
    "kind": "constraint",
    "scope": "ledger-api",
    "text": "Money as integer cents.",
    "keywords": [["cents"], ["integer", "bigint"]],
}
HEADER = {
    "kind": "superseded",
    "scope": "ledger-api",
    "text": "Header versioning.",
    "keywords": [["accept-version"]],
    "unless": ["dropped", "instead"],
}


def test_an_item_counts_only_when_one_line_holds_every_keyword_group():
    assert captured_in("- Amounts are stored as integer cents.", [["cents"], ["integer"]])
    assert not captured_in("- Amounts are stored in cents.\n- Ids are integer.", [["cents"], ["integer"]])


def test_keywords_match_whole_words_only_unless_marked_as_a_prefix():
    assert not captured_in("the pint glass", [["int"]])
    assert captured_in("an int column", [["int"]])
    assert captured_in("we migrated twice", [["migrat*"]])
    assert captured_in("Versioned under /v2 now", [["/v2"]])


def test_a_distractor_on_a_line_that_sets_it_aside_is_not_present():
    assert distractor_in("- Versioning uses the Accept-Version header.", HEADER)
    assert not distractor_in("- Accept-Version was dropped for /v1 paths.", HEADER)


def test_the_scorer_reads_the_documents_of_each_scope(subject, actor):
    common = {"subject": subject, "scope": "ledger-api", "actor": actor}
    document_write(path=MEMORY_MD, content="# ledger-api\n- Money is integer cents.\n", **common)
    document_write(path=SUMMARY_MD, content="Versioning: the Accept-Version header.\n", **common)
    document_write(
        path=skill_path("weekly-release"),
        content="# weekly-release\n1. Bump pyproject.\n2. make check\n3. git tag and push\n4. curl /healthz\n",
        name="weekly-release",
        **common,
    )
    # the same words in another scope's documents do not count for this one
    document_write(
        subject=subject, scope="", actor=actor, path=MEMORY_MD, content="- Release, then check healthz.\n"
    )
    missed = {**CENTS, "id": "missed", "keywords": [["graphql"], ["rejected"]]}
    report = evaluate(
        _set([CENTS, RELEASE, missed], [HEADER], ["sk_test_secret"]),
        subject=subject,
    )
    by_id = {i.id: i for i in report.items}
    assert (by_id["cents"].documents, by_id["cents"].summary) == (True, False)
    assert by_id["release"].skill is True
    assert by_id["release"].documents is False  # no one line says release and healthz
    assert by_id["missed"].documents is False
    assert [(d.documents, d.summary) for d in report.distractors] == [(True, True)]
    assert report.secrets == {"sk_test_secret": []}
    counts = report.counts()
    assert counts["total"]["documents"] == {"captured": 1, "of": 3}
    assert counts["workflow"]["skill"] == {"captured": 1, "of": 1}


def test_a_secret_in_any_document_is_reported_where_it_leaked(subject, actor):
    # where a spare key hides is no pattern redaction knows, so it reaches the document as written
    document_write(
        subject=subject,
        scope="kitchen-reno",
        actor=actor,
        path=MEMORY_MD,
        content="- The spare key is under the third flowerpot.\n",
    )
    report = evaluate(_set([], secrets=["third flowerpot", "Sunflower-Attic-88"]), subject=subject)
    assert report.secrets == {"third flowerpot": ["documents kitchen-reno"], "Sunflower-Attic-88": []}
    assert report.as_dict()["secrets_leaked"] == 1


def test_the_labelled_set_is_shaped_as_the_scorer_reads_it():
    data = load_set(DEFAULT_DATA)
    conversations = data["conversations"]
    assert len(conversations) >= 8
    assert len([s for s in set_scopes(data) if s]) == 3
    assert all(8 <= len(c["messages"]) <= 30 for c in conversations)
    items = [i for c in conversations for i in c["expected"]] + [
        i for p in data["projects"] for i in p["expected"]
    ]
    assert {i["kind"] for i in items} == set(KINDS)
    assert all(2 <= len(i["keywords"]) <= 4 for i in items)
    # every item's own sentence captures it: what the keywords ask for can be written on one line
    assert [i["id"] for i in items if not captured_in(i["text"], i["keywords"])] == []
    assert [i["id"] for i in items if i.get("steps") and not steps_in(i["text"], i["steps"])] == []
    recurring = [i for i in items if i["kind"] == "workflow" and len(i.get("conversations", [])) >= 2]
    assert len(recurring) >= 3 and all(i["steps"] for i in recurring)
    texts = " ".join(m["text"] for c in conversations for m in c["messages"])
    assert all(secret in texts for secret in data["secrets"])


def test_the_set_loads_as_one_subject_with_its_scopes_and_times(db, actor):
    data = load_set(DEFAULT_DATA)
    app = app_create(name="summaries-eval-load", config=app_config(), actor=actor)
    subject = set_load(data, app=app, actor=actor)
    assert Conversation.objects.filter(subject=subject).count() == len(data["conversations"])
    tidewater = Conversation.objects.get(subject=subject, external_id="tidewater-01-oom")
    assert (tidewater.scope, tidewater.working_dir) == ("", "/srv/etl/tidewater")
    first = Message.objects.filter(conversation=tidewater).order_by("occurred_at").first()
    assert first.occurred_at.isoformat() == "2026-01-13T07:02:00+00:00"
    # redaction at ingest: neither the Stripe key nor the lockbox code reaches a message
    stored = " ".join(Message.objects.filter(conversation__subject=subject).values_list("text", flat=True))
    assert "sk_test_51NbX8kLq2Zr7Yt0aVw3cDeFgH" not in stored
    assert "7392" not in stored and "[REDACTED:access_code]" in stored


def test_the_recorder_keeps_each_exchange_with_a_match_unique_to_it(tmp_path):
    answers = iter(['{"a": 1}', '{"a": 2}'])

    class Server(httpx2.BaseTransport):
        def handle_request(self, request):
            return httpx2.Response(200, json={"choices": [{"message": {"content": next(answers)}}]})

    recorder = CassetteRecorder(["the merge task gets killed, exit code 137, every night again"])
    recorder.real = Server()
    client = httpx2.Client(transport=recorder)
    shared = "Conversation 1: its messages, oldest first, as JSON objects"
    for user in (
        f'{shared}\n<conversation>\n[{{"text": "the merge task gets killed, exit code 137, every night again"}}]\n</conversation>',
        f"{shared}\n<conversation>\n[]\n</conversation>\nRaw memories of the scope kitchen-reno follow",
    ):
        client.post(
            "http://llm.test/v1/chat/completions", json={"messages": [{"role": "user", "content": user}]}
        )
    out = tmp_path / "summaries.json"
    recorder.write(out)
    interactions = json.loads(out.read_text())["interactions"]
    assert [i["match"] for i in interactions] == [
        "the merge task gets killed, exit code 137, every night again",
        "Raw memories of the scope kitchen-reno follow",
    ]
    assert interactions[1]["response"]["body"]["choices"][0]["message"]["content"] == '{"a": 2}'


def test_the_recorder_never_matches_on_a_database_id_and_repeats_keep_their_order(tmp_path):
    answers = iter(['{"a": 1}', '{"a": 2}'])

    class Server(httpx2.BaseTransport):
        def handle_request(self, request):
            return httpx2.Response(200, json={"choices": [{"message": {"content": next(answers)}}]})

    recorder = CassetteRecorder()
    recorder.real = Server()
    client = httpx2.Client(transport=recorder)
    # two scopes composed from the same extraction ask the same question twice
    user = "## Tiles for the splashback — 2026-02-01 — conversation 41\n- decided: matte zellige tiles, grey grout"
    for _ in range(2):
        client.post(
            "http://llm.test/v1/chat/completions", json={"messages": [{"role": "user", "content": user}]}
        )
    out = tmp_path / "summaries.json"
    recorder.write(out)
    interactions = json.loads(out.read_text())["interactions"]
    assert [i["match"] for i in interactions] == ["- decided: matte zellige tiles, grey grout"] * 2

    replay = Cassette({"about": "", "interactions": interactions})
    with replay.client() as replayed:
        contents = [
            replayed.post(
                "http://llm.test/v1/chat/completions",
                json={"messages": [{"role": "user", "content": user.replace("41", "7")}]},
            ).json()["choices"][0]["message"]["content"]
            for _ in range(3)
        ]
    assert contents == ['{"a": 1}', '{"a": 2}', '{"a": 1}'] and replay.unmatched == []


def test_a_request_the_server_never_answered_is_recorded_and_replayed_as_its_timeout(tmp_path):
    class Server(httpx2.BaseTransport):
        def handle_request(self, request):
            if b"slow" in request.content:
                raise httpx2.ReadTimeout("the server did not answer", request=request)
            return httpx2.Response(200, json={"choices": [{"message": {"content": "{}"}}]})

    recorder = CassetteRecorder(name="extraction")
    recorder.real = Server()
    client = httpx2.Client(transport=recorder)
    # reflection's prompt: the "Current time" line differs per message too, but lies outside the
    # <conversation> block the replay looks in, so the match is taken from the block
    asked = {}
    for text, when in (("a slow one, for the model at least", "09:00"), ("a quick question here", "10:00")):
        user = f"Current time: 2024-03-14T{when}\n<conversation>\n[1] 2024-03-14 {when} user: {text}\n</conversation>"
        asked[text] = user
        try:
            client.post(
                "http://llm.test/v1/chat/completions", json={"messages": [{"role": "user", "content": user}]}
            )
        except httpx2.ReadTimeout:
            pass
    out = tmp_path / "extraction.json"
    recorder.write(out)
    interactions = json.loads(out.read_text())["interactions"]
    assert [(i["name"], i["match"], i.get("raise")) for i in interactions] == [
        ("extraction-001", "[1] 2024-03-14 09:00 user: a slow one, for the model at least", "ReadTimeout"),
        ("extraction-002", "[1] 2024-03-14 10:00 user: a quick question here", None),
    ]
    assert "response" not in interactions[0]

    replay = Cassette({"about": "", "interactions": interactions})
    with replay.client() as replayed:
        with pytest.raises(httpx2.ReadTimeout):
            replayed.post(
                "http://llm.test/v1/chat/completions",
                json={"messages": [{"role": "user", "content": asked["a slow one, for the model at least"]}]},
            )
        answer = replayed.post(
            "http://llm.test/v1/chat/completions",
            json={"messages": [{"role": "user", "content": asked["a quick question here"]}]},
        )
    assert answer.json()["choices"][0]["message"]["content"] == "{}" and replay.unmatched == []


def test_config_overrides_reach_the_eval_app_and_a_wrong_key_is_refused(db, tmp_path):
    from django.core.management.base import CommandError

    subset = tmp_path / "one.json"
    data = load_set(DEFAULT_DATA)
    subset.write_text(json.dumps({**data, "conversations": data["conversations"][:1], "projects": []}))
    call_command("summaries_eval", "--data", str(subset), "--config", '{"memories": {"maxSkills": 1}}')
    app = App.objects.get(name__startswith="summaries-eval-")
    assert app.config["memory"]["memories"] == {
        "minRolloutIdleHours": 0,
        "maxRolloutAgeDays": 3650,
        "maxSkills": 1,
    }
    with pytest.raises(CommandError, match="memories.maxSkill"):
        call_command("summaries_eval", "--data", str(subset), "--config", '{"memories": {"maxSkill": 1}}')
    with pytest.raises(CommandError, match="not JSON"):
        call_command("summaries_eval", "--data", str(subset), "--config", "maxSkills=1")


def test_the_command_refuses_to_record_without_a_model(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--record needs --provider"):
        call_command("summaries_eval", "--record", "/tmp/never.json")


def test_the_heuristic_path_captures_the_labelled_set(db, actor):
    report = measure(load_set(DEFAULT_DATA), actor=actor)
    counts = report.counts()["total"]
    assert report.run.get("extracted") == len(load_set(DEFAULT_DATA)["conversations"])
    assert counts["documents"]["captured"] >= HEURISTIC_DOCUMENTS_FLOOR * counts["documents"]["of"]
    assert counts["summary"]["captured"] >= HEURISTIC_SUMMARY_FLOOR * counts["summary"]["of"]
    assert counts["skill"]["captured"] >= HEURISTIC_SKILL_FLOOR * counts["skill"]["of"]
    assert report.as_dict()["secrets_leaked"] == 0
