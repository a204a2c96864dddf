"""The session summary in the context (memory.backend "local"): the "Memory Guidance" block of
the stable prefix, pinned per conversation, and the <mental_models> block of the tail."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from memory.config import get_config
from memory.context import GUIDANCE, context_build
from memory.documents import MEMORY_MD, SUMMARY_MD, mental_model_path, skill_path
from memory.models import ContextDelivery, Conversation, MemoryDocument
from memory.services.apps import app_config_set
from memory.services.conversations import conversation_get_or_create
from memory.services.documents import conversation_memory_reload, document_prune, document_write
from memory.tokens import estimate_tokens

pytestmark = pytest.mark.postgres

SUMMARY_V1 = "The billing api deploys with make release; the staging database is read-only."
SUMMARY_V2 = "The billing api now deploys through the pipeline; make release is retired."


@pytest.fixture
def local(app, actor):
    """The app with the session-summary backend on; returns its configuration."""
    app_config_set(app=app, config={"memory": {"backend": "local"}}, actor=actor)
    return get_config(app)


def _local_with(app, actor, **memories):
    app_config_set(app=app, config={"memory": {"backend": "local", "memories": memories}}, actor=actor)
    return get_config(app)


@pytest.fixture
def written(subject, actor):
    """MEMORY.md, one skill and the summary, written in that order (as phase 2 writes them)."""
    document_write(subject=subject, path=MEMORY_MD, content="# Memory\n- deploys: make release", actor=actor)
    document_write(
        subject=subject,
        path=skill_path("release-checklist"),
        name="release-checklist",
        description="when shipping the billing api",
        content="# Release checklist\n1. make release",
        actor=actor,
    )
    _, version = document_write(subject=subject, path=SUMMARY_MD, content=SUMMARY_V1, actor=actor)
    return version


def _conversation(subject, actor, external_id="c1", **fields):
    return conversation_get_or_create(subject=subject, external_id=external_id, actor=actor, **fields)[0]


def _later(minutes=1):
    return time_machine.travel(timezone.now() + timedelta(minutes=minutes), tick=True)


def test_the_stable_prefix_carries_the_summary_and_what_was_learned_when_the_backend_is_local(
    subject, local, written
):
    context = context_build(subject=subject, message="how do I deploy?", config=local)

    prefix = context.stable_prefix.text
    assert prefix.startswith(GUIDANCE + "\n\n## Memory Guidance")
    assert f"<memory_summary>\n{SUMMARY_V1}\n</memory_summary>" in prefix
    assert "- memory://root/MEMORY.md — " in prefix
    assert "- memory://root/skills/release-checklist/SKILL.md — when shipping the billing api" in prefix
    assert "treat that memory as stale" in prefix
    assert context.summary == {"url": "memory://root", "version": 1, "pinned": False}


def test_with_the_backend_off_the_prefix_is_the_guidance_alone(subject, config, written, actor):
    conversation = _conversation(subject, actor)

    context = context_build(
        subject=subject, message="how do I deploy?", config=config, conversation=conversation
    )

    assert context.stable_prefix.text == GUIDANCE
    assert context.summary is None and context.as_dict()["summary"] is None
    assert [b.name for b in context.sections] == [
        "profile",
        "recalled",
        "memory-index",
        "lessons",
        "procedures",
        "contract",
        "state",
        "consequences",
        "topics",
        "transcript",
    ]
    conversation.refresh_from_db()
    assert conversation.summary_version is None


def test_a_recorded_build_pins_the_summary_version_on_the_conversation(subject, local, written, actor):
    conversation = _conversation(subject, actor)

    context = context_build(subject=subject, message="deploy", config=local, conversation=conversation)

    assert context.summary == {"url": "memory://root", "version": 1, "pinned": True}
    assert Conversation.objects.get(pk=conversation.pk).summary_version_id == written.pk


def test_a_preview_build_pins_nothing(subject, local, written, actor):
    conversation = _conversation(subject, actor)

    context = context_build(
        subject=subject, message="deploy", config=local, conversation=conversation, record=False
    )

    assert context.summary == {"url": "memory://root", "version": 1, "pinned": False}
    assert Conversation.objects.get(pk=conversation.pk).summary_version_id is None


def test_the_prefix_stays_byte_identical_across_turns_after_a_newer_summary_is_written(
    subject, local, written, actor
):
    conversation = _conversation(subject, actor)
    first = context_build(subject=subject, message="deploy", config=local, conversation=conversation)
    with _later():
        document_write(subject=subject, path=SUMMARY_MD, content=SUMMARY_V2, actor=actor)
        document_write(
            subject=subject,
            path=skill_path("pipeline-deploy"),
            name="pipeline-deploy",
            description="when deploying through the pipeline",
            content="# Pipeline deploy",
            actor=actor,
        )
        second = context_build(
            subject=subject,
            message="deploy again",
            config=local,
            conversation=Conversation.objects.get(pk=conversation.pk),
        )

    assert second.stable_prefix.text == first.stable_prefix.text
    assert SUMMARY_V1 in second.stable_prefix.text and "pipeline-deploy" not in second.stable_prefix.text
    assert second.stable_prefix.unchanged is True
    assert second.summary == {"url": "memory://root", "version": 1, "pinned": True}


def test_a_new_conversation_gets_the_newer_summary(subject, local, written, actor):
    context_build(subject=subject, message="deploy", config=local, conversation=_conversation(subject, actor))
    with _later():
        document_write(subject=subject, path=SUMMARY_MD, content=SUMMARY_V2, actor=actor)
        fresh = _conversation(subject, actor, external_id="c2")
        context = context_build(subject=subject, message="deploy", config=local, conversation=fresh)

    assert SUMMARY_V2 in context.stable_prefix.text
    assert context.summary == {"url": "memory://root", "version": 2, "pinned": True}
    assert Conversation.objects.get(pk=fresh.pk).summary_version.number == 2


def test_a_memory_reload_repins_the_current_summary_and_sends_the_prefix_again(
    subject, local, written, actor
):
    conversation = _conversation(subject, actor)
    context_build(subject=subject, message="deploy", config=local, conversation=conversation)
    with _later():
        document_write(subject=subject, path=SUMMARY_MD, content=SUMMARY_V2, actor=actor)
        conversation_memory_reload(conversation=conversation, actor=actor)
        context = context_build(subject=subject, message="deploy", config=local, conversation=conversation)

    assert SUMMARY_V2 in context.stable_prefix.text and SUMMARY_V1 not in context.stable_prefix.text
    assert context.stable_prefix.unchanged is False
    assert context.summary == {"url": "memory://root", "version": 2, "pinned": True}


def test_a_conversation_of_a_project_gets_its_projects_summary_and_skills(subject, local, written, actor):
    document_write(
        subject=subject,
        scope="billing-api",
        path=skill_path("invoice-rerun"),
        name="invoice-rerun",
        description="when an invoice batch failed",
        content="# Rerun invoices",
        actor=actor,
    )
    document_write(
        subject=subject, scope="billing-api", path=SUMMARY_MD, content="Billing only.", actor=actor
    )
    billing = _conversation(subject, actor, scope="billing-api")
    elsewhere = _conversation(subject, actor, external_id="c2", scope="garden")

    in_billing = context_build(subject=subject, message="invoices", config=local, conversation=billing)
    in_garden = context_build(subject=subject, message="invoices", config=local, conversation=elsewhere)

    assert "Billing only." in in_billing.stable_prefix.text
    assert "memory://scope/billing-api/skills/invoice-rerun/SKILL.md" in in_billing.stable_prefix.text
    assert "release-checklist" not in in_billing.stable_prefix.text
    assert in_billing.summary["url"] == "memory://scope/billing-api"
    assert SUMMARY_V1 in in_garden.stable_prefix.text and in_garden.summary["url"] == "memory://root"


def test_a_skill_pruned_before_the_summary_is_not_listed(subject, local, written, actor):
    skill = MemoryDocument.objects.get(subject=subject, path=skill_path("release-checklist"))
    with _later():
        document_prune(document=skill, actor=actor)
    with _later(2):
        document_write(subject=subject, path=SUMMARY_MD, content=SUMMARY_V2, actor=actor)
        context = context_build(subject=subject, message="deploy", config=local)

    assert "release-checklist" not in context.stable_prefix.text
    assert "memory://root/MEMORY.md" in context.stable_prefix.text


def test_the_memory_guidance_is_held_to_its_token_limit_and_keeps_its_framing(subject, app, actor):
    config = _local_with(app, actor, summaryInjectionTokenLimit=300)
    long_summary = " ".join(
        f"Decision {i}: the billing api keeps its ledger in Postgres." for i in range(200)
    )
    document_write(subject=subject, path=SUMMARY_MD, content=long_summary, actor=actor)

    context = context_build(subject=subject, message="ledger", config=config)

    guidance = context.stable_prefix.text[len(GUIDANCE) + 2 :]
    assert estimate_tokens(guidance) <= 300
    assert guidance.startswith("## Memory Guidance") and "</memory_summary>" in guidance
    assert "Decision 0:" in guidance and "Decision 199:" not in guidance
    assert "…\n</memory_summary>" in guidance
    assert context.stable_prefix.tokens <= context.stable_prefix.cap


def test_a_zero_token_limit_injects_no_guidance(subject, app, actor, written):
    config = _local_with(app, actor, summaryInjectionTokenLimit=0)

    context = context_build(subject=subject, message="deploy", config=config)

    assert context.stable_prefix.text == GUIDANCE


def test_the_context_answer_says_which_summary_version_the_prefix_carries(
    client, subject, local, written, actor
):
    conversation = _conversation(subject, actor)

    response = client.post(
        "/api/v1/context",
        {"subject": "alice", "message": "deploy", "conversation": conversation.pk},
        format="json",
    )

    assert response.status_code == 200
    data = response.json()
    assert data["summary"] == {"url": "memory://root", "version": 1, "pinned": True}
    assert SUMMARY_V1 in data["stable_prefix"]
    assert Conversation.objects.get(pk=conversation.pk).summary_version_id == written.pk


# --- mental models ------------------------------------------------------------------------
def _model(subject, actor, name, content):
    return document_write(
        subject=subject,
        path=mental_model_path(name),
        name=name,
        description=f"what {name} models",
        content=content,
        actor=actor,
    )[0]


def _mental_models(context):
    return next(b for b in context.sections if b.name == "mental_models")


def test_the_mental_models_block_ends_the_tail_before_working_memory_and_is_sent_once(subject, local, actor):
    _model(subject, actor, "current-projects", "Billing api migration; garden planner.")
    _model(subject, actor, "who-they-are", "A backend engineer in Lisbon.")
    conversation = _conversation(subject, actor)

    first = context_build(subject=subject, message="hello", config=local, conversation=conversation)
    second = context_build(subject=subject, message="hello again", config=local, conversation=conversation)

    block = _mental_models(first)
    # then the person's sections (contract, state, consequences) and working memory's (topics,
    # transcript), all empty here
    assert first.sections[-6] is block
    assert [b.name for b in first.sections[-2:]] == ["topics", "transcript"]
    assert block.text == (
        "<mental_models>\n"
        "(summaries of earlier notes, not established fact)\n"
        "## current-projects (memory://root/mental_models/current-projects.md)\n"
        "Billing api migration; garden planner.\n\n"
        "## who-they-are (memory://root/mental_models/who-they-are.md)\n"
        "A backend engineer in Lisbon.\n"
        "</mental_models>"
    )
    assert first.as_dict()["tail"].endswith(block.text)
    assert _mental_models(second).unchanged is True
    assert "<mental_models>" not in second.as_dict()["tail"]
    last = second.as_dict()["blocks"][-6]
    assert last["name"] == "mental_models" and last["text"] is None and last["unchanged"] is True


def test_a_changed_mental_model_is_sent_again(subject, local, actor):
    _model(subject, actor, "who-they-are", "A backend engineer in Lisbon.")
    conversation = _conversation(subject, actor)
    context_build(subject=subject, message="hello", config=local, conversation=conversation)

    _model(subject, actor, "who-they-are", "A backend engineer, moved to Porto.")
    context = context_build(subject=subject, message="hello", config=local, conversation=conversation)

    assert _mental_models(context).unchanged is False
    assert "moved to Porto" in context.as_dict()["tail"]


def test_a_memory_reload_sends_the_mental_models_again(subject, local, actor):
    _model(subject, actor, "who-they-are", "A backend engineer in Lisbon.")
    conversation = _conversation(subject, actor)
    context_build(subject=subject, message="hello", config=local, conversation=conversation)

    conversation_memory_reload(conversation=conversation, actor=actor)
    context = context_build(subject=subject, message="hello", config=local, conversation=conversation)

    assert _mental_models(context).unchanged is False
    assert "<mental_models>" in context.as_dict()["tail"]
    assert ContextDelivery.objects.filter(conversation=conversation, block="mental_models").exists()


def test_without_mental_models_the_block_has_no_text(subject, local, actor):
    document_write(subject=subject, path=mental_model_path("empty"), name="empty", content="  ", actor=actor)

    context = context_build(subject=subject, message="hello", config=local)

    assert _mental_models(context).text == ""
    assert "mental_models" not in context.as_dict()["tail"]


def test_pruned_and_project_scoped_documents_are_no_mental_models(subject, local, actor):
    pruned = _model(subject, actor, "old-job", "Worked at Initech.")
    document_prune(document=pruned, actor=actor)
    document_write(subject=subject, path=MEMORY_MD, content="not a model", actor=actor)

    context = context_build(subject=subject, message="hello", config=local)

    assert _mental_models(context).text == ""


def test_the_mental_models_block_is_held_to_its_cap_and_counts_what_it_left_out(subject, app, actor):
    config = _local_with(app, actor, mentalModelsMaxTokens=120)
    for name in ("a-first", "b-second", "c-third"):
        _model(subject, actor, name, f"{name} " + "is a model with a good deal to say " * 12)

    block = _mental_models(context_build(subject=subject, message="hello", config=config))

    assert block.tokens <= 120
    assert block.omitted >= 1
    assert f"({block.omitted} more mental model" in block.text
    assert block.text.startswith(
        "<mental_models>\n(summaries of earlier notes, not established fact)\n## a-first"
    ) and block.text.endswith("</mental_models>")


def test_with_the_backend_off_mental_models_stay_out_of_the_context(subject, config, actor):
    _model(subject, actor, "who-they-are", "A backend engineer in Lisbon.")

    context = context_build(subject=subject, message="hello", config=config)

    assert "mental_models" not in [b.name for b in context.sections]
    assert "mental_models" not in context.as_dict()["tail"]


def test_a_skills_description_is_read_as_of_the_pinned_summary(subject, local, actor):
    def skill(description):
        document_write(
            subject=subject,
            path=skill_path("invoice-rerun"),
            name="invoice-rerun",
            description=description,
            content=f"---\nname: invoice-rerun\ndescription: {description}\n---\n# Rerun invoices",
            actor=actor,
        )

    skill("when an invoice batch failed")
    document_write(subject=subject, path=SUMMARY_MD, content=SUMMARY_V1, actor=actor)
    conversation = _conversation(subject, actor)
    first = context_build(subject=subject, message="invoices", config=local, conversation=conversation)
    with _later():
        skill("when the nightly invoice job stopped")
        second = context_build(subject=subject, message="invoices", config=local, conversation=conversation)

    assert "invoice-rerun/SKILL.md — when an invoice batch failed" in first.stable_prefix.text
    assert second.stable_prefix.text == first.stable_prefix.text
