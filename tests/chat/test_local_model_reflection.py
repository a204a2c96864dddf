"""Reflection through a local OpenAI-compatible server (llama.cpp, Ollama, LM Studio), replayed
from recorded exchanges (tests/data/llm_cassettes/local_reflection.json, tests/llm_cassette.py):
whole runs of `turn_reflect` and of `extraction_eval`, the real SDK, provider and parsing code
reading the bodies those servers return."""

import json
from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from chat.reflect import reflection_enqueue, turn_reflect
from chat.reflection.evaluation import load_cases
from memory.models import Note, PendingMemory, ProfileFact
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.llm import set_http_client_factory
from memoryweb.models import Counter
from tests.llm_cassette import Cassette

BASE_URL = "http://127.0.0.1:8080/v1"
LOCAL = {"reflection": "openai-compatible/qwen2.5-7b-instruct", "baseUrl": BASE_URL, "maxRetries": 0}


@pytest.fixture
def cassette():
    recorded = Cassette("local_reflection")
    recorded.interactions = [i for i in recorded.interactions if i["origin"] == "shaped"]
    previous = set_http_client_factory(lambda spec: recorded.client())
    yield recorded
    set_http_client_factory(previous)
    assert not recorded.unmatched, "a request had no recorded answer"


@pytest.fixture
def local_app(app, actor):
    app_config_set(app=app, config={"memory": {"llm": LOCAL}}, actor=actor)
    return app


def case_text(case_id: str) -> str:
    _, cases = load_cases()
    return next(c["text"] for c in cases if c["id"] == case_id)


def reflect_on(subject, actor, text: str):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="local", actor=actor)
    when = datetime(2024, 3, 14, 10, 0, tzinfo=UTC)
    user, _ = message_add(conversation=conversation, role="user", actor=actor, occurred_at=when, text=text)
    run = reflection_enqueue(conversation=conversation, through_message=user)
    stats = turn_reflect(run_id=run.pk)
    return user, stats


def facts_of(subject) -> dict[str, str]:
    return dict(ProfileFact.objects.filter(subject=subject, valid_to=None).values_list("key", "value"))


def fallbacks() -> dict[str, int]:
    return dict(
        Counter.objects.filter(name__startswith="llm.fallback.reflection").values_list("name", "value")
    )


def test_a_llama_server_answer_becomes_the_facts_of_the_turn(local_app, subject, actor, cassette):
    user, stats = reflect_on(subject, actor, case_text("name-job-combo"))

    assert stats["source"] == "llm" and cassette.played == ["llama-server-name-job-combo"]
    assert facts_of(subject) == {"name": "Priya Raman", "employer": "Stripe", "job_title": "backend engineer"}
    assert ProfileFact.objects.filter(subject=subject, source_message=user).count() == 3
    sent = cassette.requests[0]
    assert sent["model"] == "qwen2.5-7b-instruct" and sent["response_format"] == {"type": "json_object"}
    assert "max_tokens" in sent and "max_completion_tokens" not in sent


def test_a_think_block_before_the_json_is_skipped(local_app, subject, actor, cassette):
    _, stats = reflect_on(subject, actor, case_text("health-diabetes"))

    assert stats["source"] == "llm" and cassette.played == ["ollama-think-block"]
    pending = PendingMemory.objects.exclude(kind="evidence").get(
        subject=subject
    )  # health: the consent gate asks first
    assert pending.category.slug == "health" and pending.payload["value"] == "type 1 diabetes"
    assert not ProfileFact.objects.filter(subject=subject).exists() and not fallbacks()


def test_json_in_a_code_fence_with_prose_after_it_is_read(local_app, subject, actor, cassette):
    _, stats = reflect_on(subject, actor, case_text("job-nurse"))

    assert stats["source"] == "llm" and stats["facts"] == 2
    assert facts_of(subject) == {"job_title": "nurse", "employer": "St. Mary's"}


def test_a_truncated_answer_falls_back_to_the_heuristic_extractor(local_app, subject, actor, cassette):
    _, stats = reflect_on(subject, actor, case_text("plan-flight"))

    assert cassette.played == ["llama-server-truncated"] and stats["source"] == "heuristic"
    assert fallbacks() == {"llm.fallback.reflection.truncated": 1}
    note = Note.objects.get(subject=subject)  # the heuristic's plan note for the trip
    assert (
        note.tags[0] == "plan"
        and "travel" in note.tags
        and note.occurred_at.date().isoformat() == "2024-03-22"
    )


def test_a_server_that_refuses_response_format_is_asked_again_without_it(local_app, subject, actor, cassette):
    _, stats = reflect_on(subject, actor, case_text("arch-neovim"))

    assert cassette.played == ["lm-studio-refuses-json-mode", "lm-studio-without-json-mode"]
    assert "response_format" in cassette.requests[0] and "response_format" not in cassette.requests[1]
    assert stats["source"] == "llm"
    assert facts_of(subject) == {"os": "Arch Linux", "editor": "Neovim", "tools": "tmux"}
    assert Counter.objects.get(name="llm.json_mode_refused").value == 1 and not fallbacks()


def test_a_server_that_never_answers_falls_back_and_is_counted(local_app, subject, actor, cassette):
    _, stats = reflect_on(subject, actor, case_text("diet-vegetarian"))

    assert cassette.played == ["server-never-answers"] and stats["source"] == "heuristic"
    assert fallbacks() == {"llm.fallback.reflection.error": 1}
    assert facts_of(subject) == {"diet": "vegetarian"}  # what the heuristic extractor found


def test_extraction_eval_scores_the_model_path_and_counts_its_fallbacks(db, tmp_path, capsys, cassette):
    reference, cases = load_cases()
    chosen = ["name-job-combo", "job-nurse", "plan-flight", "diet-vegetarian"]
    data = tmp_path / "labelled.json"
    data.write_text(
        json.dumps({"reference": reference.isoformat(), "cases": [c for c in cases if c["id"] in chosen]})
    )
    out = tmp_path / "eval.json"

    call_command(
        "extraction_eval",
        "--data",
        str(data),
        "--provider",
        LOCAL["reflection"],
        "--base-url",
        BASE_URL,
        "--max-retries",
        "0",
        "--split",
        "dev",
        "--json",
        str(out),
    )

    printed = capsys.readouterr().out
    assert "model answers: 2/4 messages" in printed and "error 1, truncated 1" in printed
    metrics = json.loads(out.read_text())
    assert metrics["extractor"]["name"] == LOCAL["reflection"]
    assert metrics["extractor"]["fallbacks"] == {"error": 1, "truncated": 1}
    # 6 facts labelled: 3 from the plain answer, 2 from the fenced one and the diet fact from
    # the heuristic fallback after the timeout; the trip note from the one after the truncation
    assert (
        metrics["dev"]["metrics"]["facts"]["tp"] == 6 and metrics["dev"]["metrics"]["facts"]["expected"] == 6
    )
    assert metrics["dev"]["metrics"]["notes (kind)"]["tp"] == 1
    assert sorted(cassette.played) == sorted(
        [
            "llama-server-name-job-combo",
            "llama-server-fenced-json",
            "llama-server-truncated",
            "server-never-answers",
        ]
    )


def test_extraction_eval_refuses_a_compatible_spec_without_a_server(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="baseUrl"):
        call_command("extraction_eval", "--provider", "openai-compatible/some-model", "--base-url", "")


def test_a_recorded_llama_cpp_answer_is_stored_as_it_came(local_app, subject, actor):
    recorded = Cassette("local_reflection")
    recorded.interactions = [recorded.interaction("recorded-name-job-combo")]
    previous = set_http_client_factory(lambda spec: recorded.client())
    try:
        user, stats = reflect_on(subject, actor, case_text("name-job-combo"))
    finally:
        set_http_client_factory(previous)

    assert stats["source"] == "llm" and recorded.played == ["recorded-name-job-combo"]
    # the 1.5B model put the job in a note, and gave the name pinned=false with no keywords,
    # which fact_set refuses (an unpinned fact needs keywords): that operation alone is skipped
    assert facts_of(subject) == {}
    assert Counter.objects.get(name="reflection.invalid_operation").value == 1
    # and it put the job in a note on message 2 of a one-message conversation: a message it was
    # not shown, so that note is dropped and counted rather than pinned on the wrong turn
    assert not Note.objects.filter(subject=subject).exists()
    assert Counter.objects.get(name="llm.unknown_message").value == 1


class Answering:
    """A client whose model answered `answer` (the JSON parsing is tested above, over HTTP)."""

    def __init__(self, answer):
        self.answer = answer

    def complete_json(self, **_kwargs):
        return self.answer


def test_an_operation_naming_a_message_that_was_not_shown_is_dropped_and_counted(db):
    from chat.reflect import Operation
    from chat.reflection.llm import model_operations
    from memory.config import get_config

    when = datetime(2024, 3, 14, 10, 0, tzinfo=UTC)
    shown = [
        type("M", (), {"text": text, "role": "user", "occurred_at": when})()
        for text in ("I moved to Lyon", "and I work at Airbus")
    ]
    fact = {"key": "employer", "value": "Airbus", "pinned": True, "keywords": [], "confidence": 0.9}
    answer = {
        "facts": [
            fact | {"message": 2},
            fact | {"message": 7},
            fact | {"message": None},
            fact | {"message": True},
        ],
        "notes": [{"message": 9, "content": "moved to Lyon", "tags": ["move"]}],
    }

    ops = model_operations(
        Answering(answer), shown, profile="", notes="", note_ids=set(), now=when,
        config=get_config(), operation_class=Operation,
    )  # fmt: skip

    assert [(op.op, op.message.text) for op in ops] == [("SET", "and I work at Airbus")]
    assert Counter.objects.get(name="llm.unknown_message").value == 4


@pytest.mark.parametrize(
    "split, messages, facts, note_kinds, negatives",
    [("heldout3", 36, (0, 26), (0, 13), 8), ("heldout5", 16, (0, 0), (0, 12), 4)],
)
def test_a_measured_run_replays_to_the_numbers_it_printed(
    db, tmp_path, capsys, split, messages, facts, note_kinds, negatives
):
    """tests/data/llm_cassettes/local_heldout3.json and local_heldout5.json are `extraction_eval
    --record` of the README's local-model rows (their `about` says what served them;
    docs/local-models.md has the command): Qwen2.5-Coder-1.5B on llama-server answered every
    message in the schema, and every answer was the prompt's example copied word for word,
    about messages 3 and 4 of a one-message conversation: all its operations are dropped and
    counted, nothing is extracted, and no fallback runs (the answer was valid)."""
    recorded = Cassette(f"local_{split}")
    example = recorded.interactions[0]["response"]["body"]["choices"][0]["message"]["content"]
    previous = set_http_client_factory(lambda spec: recorded.client())
    out = tmp_path / f"{split}.json"
    try:
        call_command(
            "extraction_eval",
            "--provider",
            "openai-compatible/qwen2.5-coder-1.5b",
            "--base-url",
            BASE_URL,
            "--max-retries",
            "0",
            "--split",
            split,
            "--json",
            str(out),
        )
    finally:
        set_http_client_factory(previous)

    assert not recorded.unmatched and len(recorded.played) == messages == len(set(recorded.played))
    assert all(
        i["response"]["body"]["choices"][0]["message"]["content"] == example for i in recorded.interactions
    )
    assert '"value": "Lisbon"' in example and '"message": 3' in example  # the prompt's example
    metrics = json.loads(out.read_text())
    assert metrics["extractor"]["answered"] == messages and metrics["extractor"]["fallbacks"] == {}
    scores = metrics[split]["metrics"]
    assert (scores["facts"]["predicted"], scores["facts"]["expected"]) == facts
    assert (scores["notes (kind)"]["predicted"], scores["notes (kind)"]["expected"]) == note_kinds
    assert metrics[split]["negatives"] == {"silent": negatives, "total": negatives}
    # a fact, a note and a retraction per answer, each naming a message that was not shown
    assert Counter.objects.get(name="llm.unknown_message").value == 3 * messages
    assert (
        f"model answers: {messages}/{messages} messages; heuristic fallbacks: none" in capsys.readouterr().out
    )
