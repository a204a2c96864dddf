"""`manage.py memory view|stats|diagnose|clear|reset|enqueue|rebuild` and `memory mm …`
(memoryweb/management/commands/memory.py), called as the operator would with call_command."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from chat.summaries.mental_models import BUILTIN_MODELS, mental_model_get, mental_models_seed
from memory.documents import SUMMARY_MD
from memory.models import (
    ContextDelivery,
    DocumentKind,
    JobRun,
    MemoryDocument,
    RetrievalEvent,
    SessionExtraction,
)
from memory.services import app_config_set
from tests.factories import ConversationFactory, FactFactory, SubjectFactory


class Terminal(io.StringIO):
    def isatty(self):
        return True


def memory(*args, stdin=None):
    out = io.StringIO()
    kwargs = {"stdin": stdin} if stdin is not None else {}
    call_command("memory", *args, stdout=out, stderr=io.StringIO(), **kwargs)
    return out.getvalue()


@pytest.fixture
def who(subject):
    return ["--app", subject.app.name, "--subject", subject.external_id]


def test_view_prints_the_stable_prefix_then_the_tail(subject, who, actor, config):
    FactFactory(subject=subject, key="name", value="Alice Martin", pinned=True)

    out = memory("view", *who, "--message", "what is my name")

    prefix_at, tail_at = out.index("=== stable prefix"), out.index("=== tail")
    assert prefix_at < out.index("## Memory") < tail_at
    assert "Alice Martin" in out[tail_at:]
    assert not RetrievalEvent.objects.exists()  # nothing recorded


def test_view_as_json_is_what_the_api_returns_and_checks_the_conversation(subject, who):
    conversation = ConversationFactory(subject=subject)
    other = ConversationFactory(subject=SubjectFactory(app=subject.app))

    context = json.loads(memory("view", *who, "--conversation", str(conversation.pk), "--json"))
    with pytest.raises(CommandError, match=f"no conversation {other.pk}"):
        memory("view", *who, "--conversation", str(other.pk))

    assert {"stable_prefix", "tail", "blocks", "tokens"} <= set(context)
    assert not ContextDelivery.objects.filter(conversation=conversation).exists()


def test_stats_counts_extractions_documents_and_versions(subject, who, summaries):
    stats = json.loads(memory("stats", *who))

    assert stats["extractions"] == 1 and stats["extraction_methods"] == {"heuristic": 1}
    assert stats["documents"] == {"memory": 1, "summary": 1, "skill": 0, "mental_model": len(BUILTIN_MODELS)}
    assert stats["versions"] == 2 + len(BUILTIN_MODELS)
    assert stats["last_run"] is None


def test_diagnose_with_a_subject_adds_its_summary_pipeline(subject, who, summaries):
    report = json.loads(memory("diagnose", *who))

    pipeline = report["summaries"]
    assert pipeline["backend"] == "off" and pipeline["enabled"] is False
    assert pipeline["model"]["path"] == "heuristic"
    # its one conversation had a message just now: still receiving messages, not taken
    assert pipeline["conversations"] == {"due": 0, "active": 1, "old": 0, "deferred": 0, "current": 0}
    assert pipeline["lease"]["held"] is False
    assert "embeddings" in report  # the store's own report is still there


def test_diagnose_without_a_subject_works_as_before(db):
    assert "embeddings" in json.loads(memory("diagnose"))


def test_clear_without_a_terminal_or_yes_refuses_and_deletes_nothing(subject, who, summaries):
    with pytest.raises(CommandError, match="--yes"):
        memory("clear", *who)

    assert SessionExtraction.objects.filter(subject=subject).count() == 1


def test_clear_keeps_the_mental_models(subject, who, summaries):
    out = json.loads(memory("clear", *who, "--yes"))

    assert out == {"extractions": 1, "documents": 2}
    assert not SessionExtraction.objects.filter(subject=subject).exists()
    kinds = set(MemoryDocument.objects.filter(subject=subject).values_list("kind", flat=True))
    assert kinds == {DocumentKind.MENTAL_MODEL}


def test_reset_after_yes_on_the_terminal_deletes_the_mental_models_too(subject, who, summaries):
    out = memory("reset", *who, stdin=Terminal("y\n"))

    assert "[y/N]" in out
    assert not MemoryDocument.objects.filter(subject=subject).exists()


def test_reset_answered_no_deletes_nothing(subject, who, summaries):
    with pytest.raises(CommandError, match="cancelled"):
        memory("reset", *who, stdin=Terminal("n\n"))

    assert MemoryDocument.objects.filter(subject=subject).count() == 2 + len(BUILTIN_MODELS)


def test_enqueue_queues_a_run_and_refuses_with_the_backend_off(subject, who, app, actor):
    with pytest.raises(CommandError, match="memory.backend"):
        memory("enqueue", *who)
    assert not JobRun.objects.exists()
    app_config_set(app=app, config={"memory": {"backend": "local"}}, actor=actor)

    out = json.loads(memory("enqueue", *who))

    run = JobRun.objects.get()
    assert out == {"job_run": run.pk, "status": "queued"}
    assert run.kind == "summaries" and run.subject == subject and run.stats == {}


def test_rebuild_runs_now_and_prints_the_runs_stats(subject, who, app, actor):
    app_config_set(app=app, config={"memory": {"backend": "local"}}, actor=actor)
    mental_models_seed(subject=subject, actor=actor)
    FactFactory(subject=subject, key="name", value="Alice Martin")

    out = json.loads(memory("rebuild", *who))

    run = JobRun.objects.get(pk=out["job_run"])
    assert out["status"] == run.status == "done"
    assert out["stats"]["mental_models"] == 1 and run.stats["mental_models"] == 1


def test_an_unknown_app_or_subject_is_a_clear_error(subject):
    with pytest.raises(CommandError, match="no app named 'nope'"):
        memory("stats", "--app", "nope", "--subject", "alice")
    with pytest.raises(CommandError, match="no subject 'bob'"):
        memory("stats", "--app", subject.app.name, "--subject", "bob")


# --- mental models ----------------------------------------------------------------------


def test_mm_seed_then_list(subject, who):
    seeded = memory("mm", "seed", *who)
    again = memory("mm", "seed", *who)
    listed = memory("mm", "list", *who).splitlines()

    assert seeded.startswith(f"created {len(BUILTIN_MODELS)}:")
    assert again.strip() == "every built-in model exists already"
    assert sorted(line.split("\t")[0] for line in listed) == sorted(BUILTIN_MODELS)
    assert all("\tv1\tauto,builtin\t" in line for line in listed)


def test_mm_show_prints_the_content(subject, who, actor):
    FactFactory(subject=subject, key="name", value="Alice Martin")
    mental_models_seed(subject=subject, actor=actor)

    out = memory("mm", "show", *who, "who-they-are")

    assert out.startswith("# memory://root/mental_models/who-they-are.md v1 (heuristic, ")
    assert "- Name: Alice Martin" in out


def test_mm_refresh_one_then_history_shows_the_diff(subject, who, actor):
    mental_models_seed(subject=subject, actor=actor)
    unchanged = memory("mm", "refresh", *who, "who-they-are")
    FactFactory(subject=subject, key="employer", value="Stripe")
    changed = memory("mm", "refresh", *who, "who-they-are")

    history = memory("mm", "history", *who, "who-they-are")

    assert unchanged.strip() == "who-they-are: unchanged (v1)"
    assert changed.strip() == "who-they-are: v2"
    assert history.index("## v1") < history.index("## v2")
    assert "-- Nothing known about this yet." in history and "+- Employer: Stripe" in history


def test_mm_refresh_all_takes_the_auto_refresh_models(subject, who, actor):
    mental_models_seed(subject=subject, actor=actor)
    FactFactory(subject=subject, key="name", value="Alice")

    out = json.loads(memory("mm", "refresh", *who, "--all"))

    assert out["models"] == len(BUILTIN_MODELS) and out["changed"] == ["who-they-are"]
    with pytest.raises(CommandError, match="--all"):
        memory("mm", "refresh", *who)


def test_mm_delete_asks_then_deletes_the_model_and_its_history(subject, who, actor):
    mental_models_seed(subject=subject, actor=actor)
    pk = mental_model_get(subject=subject, name="open-commitments").pk

    with pytest.raises(CommandError, match="--yes"):
        memory("mm", "delete", *who, "open-commitments")
    memory("mm", "delete", *who, "open-commitments", "--yes")

    assert not MemoryDocument.objects.filter(pk=pk).exists()
    with pytest.raises(CommandError, match="no mental model 'open-commitments'"):
        memory("mm", "show", *who, "open-commitments")


def test_mm_reload_repins_the_summary_and_forgets_what_was_sent(subject, who, actor, summaries):
    other = ConversationFactory(subject=subject)
    for conversation in (summaries, other):
        ContextDelivery.objects.create(conversation=conversation, block="stable_prefix", digest="x")
        ContextDelivery.objects.create(conversation=conversation, block="profile", digest="y")

    out = memory("mm", "reload", *who, "--conversation", str(other.pk))

    assert out.strip() == f"conversation {other.pk}: reloaded (summary v1)"
    other.refresh_from_db()
    assert other.summary_version.document.path == SUMMARY_MD
    assert list(ContextDelivery.objects.filter(conversation=other).values_list("block", flat=True)) == [
        "profile"
    ]
    assert ContextDelivery.objects.filter(conversation=summaries).count() == 2

    memory("mm", "reload", *who)

    assert ContextDelivery.objects.filter(conversation=summaries, block="stable_prefix").count() == 0


def test_mm_of_an_unknown_model_is_a_clear_error(subject, who):
    with pytest.raises(CommandError, match="no mental model 'nope'"):
        memory("mm", "history", *who, "nope")
