"""The session-summary artefacts' foundation: settings, memory:// addresses, versioned writes
(redacted, a version only on change), pruning, clearing, and a conversation's reload."""

import pytest

from memory.config import get_config, validate_app_config
from memory.documents import (
    SUMMARY_MD,
    Address,
    document_resolve,
    document_summary_for,
    document_versions,
    documents_current,
    parse_url,
    project_of,
    version_diff,
)
from memory.models import AuditEvent, ContextDelivery, DocumentKind, MemoryDocument, SessionExtraction
from memory.services.audit import Actor
from memory.services.documents import (
    conversation_memory_reload,
    conversation_summary_pin,
    document_prune,
    document_write,
    session_extraction_write,
    summaries_clear,
)
from memoryweb.errors import ConfigError, NotFound
from memoryweb.llm.spec import component_spec
from memoryweb.llm.templates import prompt_schema, render_prompt, template_variables
from tests.factories import AppFactory, ConversationFactory, MessageFactory, SubjectFactory, extraction_for

ACTOR = Actor.system("test")


def test_the_backend_is_off_by_default_and_the_seed_settings_have_their_defaults(db):
    config = get_config()

    assert config["backend"] == "off"
    assert config["memories.maxRolloutAgeDays"] == 30
    assert config["memories.minRolloutIdleHours"] == 12
    assert config["memories.maxRolloutsPerStartup"] == 64
    assert config["memories.summaryInjectionTokenLimit"] == 5000


def test_the_legacy_memories_enabled_switch_means_the_local_backend(db):
    app = AppFactory(config={"memory": {"memories": {"enabled": True}}})

    assert get_config(app)["backend"] == "local"


def test_an_explicit_backend_wins_over_the_legacy_switch(db):
    app = AppFactory(config={"memory": {"backend": "off", "memories": {"enabled": True}}})

    assert get_config(app)["backend"] == "off"


def test_an_unknown_backend_is_refused_with_the_nearest_choice(db):
    with pytest.raises(ConfigError) as error:
        validate_app_config({"memory": {"backend": "locale"}})

    assert error.value.key == "memory.backend" and "local" in str(error.value)


def test_a_setting_below_its_minimum_is_refused_naming_it(db):
    with pytest.raises(ConfigError) as error:
        validate_app_config({"memory": {"memories": {"maxRolloutsPerStartup": 0}}})

    assert error.value.key == "memory.memories.maxRolloutsPerStartup"


def test_the_summaries_role_falls_back_to_the_default_role(db):
    app = AppFactory(config={"memory": {"llm": {"default": "openai/gpt-4o-mini"}}})
    config = get_config(app)

    assert str(component_spec("summaries", config)) == "openai/gpt-4o-mini"
    assert component_spec("reflection", config).is_none


def test_the_pipeline_prompts_render_their_placeholders():
    assert template_variables("memories/stage_one_input") == {"thread_id", "response_items_json"}
    assert template_variables("memories/consolidation") == {"raw_memories", "rollout_summaries"}
    assert template_variables("memories/read-path") == {"memory_summary", "learned"}

    text = render_prompt("memories/read-path", {"memory_summary": "- uses Go", "learned": ""})

    assert "- uses Go" in text and "{{" not in text
    for name in ("stage_one_input", "consolidation", "mental_model"):
        assert prompt_schema(f"memories/{name}")["type"] == "object"


@pytest.mark.parametrize(
    "url, address",
    [
        ("memory://root", Address("", SUMMARY_MD)),
        ("memory://root/MEMORY.md", Address("", "MEMORY.md")),
        ("memory://root/skills/release-checklist/SKILL.md", Address("", "skills/release-checklist/SKILL.md")),
        ("memory://root/mental_models/who-they-are.md", Address("", "mental_models/who-they-are.md")),
        ("memory://scope/billing%2Fapi/MEMORY.md", Address("billing/api", "MEMORY.md")),
        ("memory://scope/billing", Address("billing", SUMMARY_MD)),
    ],
)
def test_a_memory_url_names_a_scope_and_a_path(url, address):
    assert parse_url(url) == address


@pytest.mark.parametrize(
    "url",
    [
        "memory://",
        "memory://root/notes.md",
        "memory://root/skills/../SKILL.md",
        "http://root/MEMORY.md",
        "memory://x",
    ],
)
def test_anything_else_is_no_address(url):
    assert parse_url(url) is None


def test_a_write_adds_a_version_only_when_the_content_changes(db):
    subject = SubjectFactory()

    document, first = document_write(subject=subject, path="MEMORY.md", content="# Memory\n- a", actor=ACTOR)
    _, same = document_write(subject=subject, path="MEMORY.md", content="# Memory\n- a", actor=ACTOR)
    _, second = document_write(subject=subject, path="MEMORY.md", content="# Memory\n- b", actor=ACTOR)

    assert first.number == 1 and same is None and second.number == 2
    assert [v.number for v in document_versions(document=document)] == [1, 2]
    document.refresh_from_db()
    assert document.current == second and document.kind == DocumentKind.MEMORY
    assert version_diff(first, second).splitlines()[-2:] == ["-- a", "+- b"]
    assert AuditEvent.objects.filter(action="document.write", object_id=str(document.pk)).count() == 2


def test_a_secret_never_reaches_a_document_or_an_extraction(db):
    conversation = ConversationFactory()
    message = MessageFactory(conversation=conversation)
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"

    _, version = document_write(
        subject=conversation.subject, path="MEMORY.md", content=f"- the key is {key}", actor=ACTOR
    )
    extraction = session_extraction_write(
        conversation=conversation,
        watermark_message_id=message.pk,
        message_count=1,
        last_message_at=message.occurred_at,
        title="keys",
        synopsis=f"pasted {key}",
        raw_memory=f"### Tools\n- {key}",
        method="heuristic",
    )

    assert key not in version.content
    extraction.refresh_from_db()
    assert key not in extraction.synopsis and key not in extraction.raw_memory


def test_a_pruned_skill_keeps_its_history_but_no_longer_resolves(db):
    subject = SubjectFactory()
    document, _ = document_write(
        subject=subject, path="skills/deploy/SKILL.md", content="1. ship", name="deploy", actor=ACTOR
    )

    assert document_prune(document=document, actor=ACTOR) is True
    assert document_prune(document=document, actor=ACTOR) is False

    assert documents_current(subject=subject) == []
    with pytest.raises(NotFound):
        document_resolve(subject=subject, url="memory://root/skills/deploy/SKILL.md")
    assert document.versions.count() == 1


def test_another_subjects_document_does_not_resolve(db):
    owner, other = SubjectFactory(), SubjectFactory()
    document_write(subject=owner, path=SUMMARY_MD, content="- summary", actor=ACTOR)

    assert document_resolve(subject=owner, url="memory://root").path == SUMMARY_MD
    with pytest.raises(NotFound):
        document_resolve(subject=other, url="memory://root")


def test_a_project_summary_is_preferred_and_the_subject_wide_one_is_the_fallback(db):
    subject = SubjectFactory()
    document_write(subject=subject, path=SUMMARY_MD, content="- all", actor=ACTOR)
    document_write(subject=subject, scope="billing", path=SUMMARY_MD, content="- billing", actor=ACTOR)

    assert document_summary_for(subject=subject, scope="billing").scope == "billing"
    assert document_summary_for(subject=subject, scope="mobile").scope == ""
    assert project_of("", "/home/me/mobile") == "/home/me/mobile" and project_of("billing", "/x") == "billing"


def test_clearing_removes_extractions_and_documents_but_keeps_mental_models(db):
    subject = SubjectFactory()
    conversation = extraction_for(subject, synopsis="s").conversation
    _, summary = document_write(subject=subject, path=SUMMARY_MD, content="- s", actor=ACTOR)
    document_write(subject=subject, path="mental_models/who-they-are.md", content="- x", actor=ACTOR)
    conversation_summary_pin(conversation=conversation, version=summary)

    result = summaries_clear(subject=subject, actor=ACTOR)

    assert result == {"extractions": 1, "documents": 1}
    assert not SessionExtraction.objects.filter(subject=subject).exists()
    assert list(MemoryDocument.objects.filter(subject=subject).values_list("kind", flat=True)) == [
        "mental_model"
    ]
    conversation.refresh_from_db()
    assert conversation.summary_version is None

    assert summaries_clear(subject=subject, actor=ACTOR, mental_models=True) == {
        "extractions": 0,
        "documents": 1,
    }
    assert not MemoryDocument.objects.filter(subject=subject).exists()


def test_a_reload_repins_the_current_summary_and_forgets_what_the_conversation_holds(db):
    conversation = ConversationFactory()
    subject = conversation.subject
    _, first = document_write(subject=subject, path=SUMMARY_MD, content="- one", actor=ACTOR)
    conversation_summary_pin(conversation=conversation, version=first)
    _, second = document_write(subject=subject, path=SUMMARY_MD, content="- two", actor=ACTOR)
    for block in ("stable_prefix", "mental_models", "profile"):
        ContextDelivery.objects.create(conversation=conversation, block=block, digest="d")

    version = conversation_memory_reload(conversation=conversation, actor=ACTOR)

    conversation.refresh_from_db()
    assert version == second and conversation.summary_version == second
    assert list(
        ContextDelivery.objects.filter(conversation=conversation).values_list("block", flat=True)
    ) == ["profile"]
