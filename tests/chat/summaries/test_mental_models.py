"""Mental models (chat/summaries/mental_models.py): seed, create, refresh from the fabric and the
session extractions, the LLM path on the wire, and the summaries run refreshing them."""

import pytest

from chat.summaries.blocks import render_block
from chat.summaries.mental_models import (
    BUILTIN_MODELS,
    EMPTY,
    MAX_TOKENS,
    mental_model_create,
    mental_model_get,
    mental_model_refresh,
    mental_models_refresh,
    mental_models_seed,
)
from chat.summaries.pipeline import summaries_run
from memory.models import DocumentKind, MemoryDocument, MemoryDocumentVersion
from memory.services import app_config_set
from memory.tokens import estimate_tokens
from memoryweb.errors import Conflict, InvalidInput, NotFound
from tests.factories import FactFactory, NoteFactory, extraction_for


def extraction(subject, *, scope="billing-api", title="Retry queue for webhooks", days_ago=2, **sections):
    return extraction_for(
        subject, scope=scope, title=title, raw_memory=render_block(sections), days_ago=days_ago
    )


def content(subject, name):
    return mental_model_get(subject=subject, name=name).current.content


def test_seed_creates_every_builtin_model_once_with_a_first_version(subject, actor):
    FactFactory(subject=subject, key="name", value="Alice Martin")

    created = mental_models_seed(subject=subject, actor=actor)
    again = mental_models_seed(subject=subject, actor=actor)

    assert sorted(d.name for d in created) == sorted(BUILTIN_MODELS)
    assert again == []
    rows = MemoryDocument.objects.filter(subject=subject, kind=DocumentKind.MENTAL_MODEL)
    assert rows.count() == len(BUILTIN_MODELS)
    assert all(d.builtin and d.auto_refresh and d.scope == "" for d in rows)
    assert MemoryDocumentVersion.objects.filter(document__in=rows).count() == len(BUILTIN_MODELS)
    assert mental_model_get(subject=subject, name="who-they-are").url == (
        "memory://root/mental_models/who-they-are.md"
    )


def test_seed_leaves_an_existing_builtin_as_it_is(subject, actor):
    mental_models_seed(subject=subject, actor=actor)
    document = mental_model_get(subject=subject, name="who-they-are")
    MemoryDocument.objects.filter(pk=document.pk).update(auto_refresh=False)
    FactFactory(subject=subject, key="name", value="Alice Martin")

    assert mental_models_seed(subject=subject, actor=actor) == []
    assert content(subject, "who-they-are") == EMPTY
    assert MemoryDocument.objects.get(pk=document.pk).auto_refresh is False


def test_who_they_are_takes_identity_facts_and_not_preferences(subject, actor):
    FactFactory(subject=subject, key="job_title", value="backend engineer")
    FactFactory(subject=subject, key="name", value="Alice Martin")
    FactFactory(subject=subject, key="location", value="Lyon")
    FactFactory(subject=subject, key="preference.cilantro", value="dislikes")

    mental_models_seed(subject=subject, actor=actor)

    assert content(subject, "who-they-are") == (
        "- Name: Alice Martin\n- Job title: backend engineer\n- Location: Lyon"
    )
    assert "- Dislikes cilantro" in content(subject, "working-preferences").splitlines()


def test_current_projects_groups_extractions_by_project_newest_first(subject, actor):
    extraction(
        subject,
        scope="billing-api",
        title="Retry queue for webhooks",
        days_ago=5,
        decisions=["Webhooks retry with exponential backoff."],
    )
    extraction(
        subject,
        scope="mobile-app",
        title="Dark mode",
        days_ago=1,
        open_questions=["Should the toggle follow the system theme?"],
    )

    mental_models_seed(subject=subject, actor=actor)

    lines = content(subject, "current-projects").splitlines()
    assert lines[0].startswith("- **mobile-app** (last worked on ") and lines[0].endswith(": Dark mode")
    assert "- mobile-app, open: Should the toggle follow the system theme?" in lines
    assert lines.index("- billing-api, decided: Webhooks retry with exponential backoff.") > 0
    assert any(line.startswith("- **billing-api**") for line in lines)


def test_working_preferences_takes_extraction_preferences_and_constraints(subject, actor):
    extraction(subject, preferences=["Answers in short bullet points."], constraints=["No new dependencies."])
    FactFactory(subject=subject, key="editor", value="neovim")

    mental_models_seed(subject=subject, actor=actor)

    lines = content(subject, "working-preferences").splitlines()
    assert lines[:3] == ["- Editor: neovim", "- Answers in short bullet points.", "- No new dependencies."]


def test_a_custom_model_selects_by_overlap_with_its_description(subject, actor):
    NoteFactory(subject=subject, content="Alice trains for the Lyon marathon in October", tags=["sport"])
    NoteFactory(subject=subject, content="The invoice export moved to a nightly job", tags=["work"])

    document = mental_model_create(
        subject=subject,
        name="fitness",
        description="Sport, running and marathon training",
        auto_refresh=False,
        actor=actor,
    )

    assert document.builtin is False and document.auto_refresh is False
    assert "marathon" in document.current.content
    assert "invoice" not in document.current.content


def test_a_refresh_with_nothing_new_adds_no_version_and_new_evidence_adds_one(subject, actor):
    mental_models_seed(subject=subject, actor=actor)
    document = mental_model_get(subject=subject, name="who-they-are")

    unchanged = mental_model_refresh(document=document, actor=actor)
    FactFactory(subject=subject, key="employer", value="Stripe")
    changed = mental_model_refresh(document=document, actor=actor)

    assert unchanged is None
    assert changed.number == 2 and changed.content == "- Employer: Stripe"
    assert document.versions.count() == 2


def test_refresh_all_takes_only_auto_refresh_models_unless_asked(subject, actor):
    mental_models_seed(subject=subject, actor=actor)
    mental_model_create(
        subject=subject, name="garden", description="The garden and plants", auto_refresh=False, actor=actor
    )
    NoteFactory(subject=subject, content="Planted tomatoes in the garden", tags=["garden"])
    FactFactory(subject=subject, key="name", value="Alice")

    auto = mental_models_refresh(subject=subject, actor=actor)
    every = mental_models_refresh(subject=subject, actor=actor, only_auto=False)

    assert auto["models"] == len(BUILTIN_MODELS) and "who-they-are" in auto["changed"]
    assert "garden" not in auto["changed"]
    assert every["changed"] == ["garden"]


def test_a_model_stays_under_its_token_cap(subject, actor):
    for i in range(80):
        NoteFactory(
            subject=subject,
            content=f"Decided to ship feature number {i} of the billing project soon",
            tags=["decision", "work"],
        )

    mental_models_seed(subject=subject, actor=actor)

    for name in BUILTIN_MODELS:
        assert estimate_tokens(content(subject, name)) <= MAX_TOKENS


def test_a_secret_in_the_evidence_is_redacted_before_it_is_written(subject, actor):
    FactFactory(subject=subject, key="name", value="Alice sk-proj-abcdefghijklmnopqrstuvwxyz0123456789")

    mental_models_seed(subject=subject, actor=actor)

    assert "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789" not in content(subject, "who-they-are")


@pytest.mark.parametrize(
    "name,description,field,error",
    [
        ("Bad Name", "x", "name", InvalidInput),
        ("seed", "x", "name", InvalidInput),
        ("ok-name", "   ", "description", InvalidInput),
    ],
)
def test_create_refuses_bad_input_naming_the_field(subject, actor, name, description, field, error):
    with pytest.raises(error) as caught:
        mental_model_create(
            subject=subject, name=name, description=description, auto_refresh=True, actor=actor
        )

    assert caught.value.field == field
    assert not MemoryDocument.objects.filter(subject=subject).exists()


def test_create_refuses_a_name_taken(subject, actor):
    mental_models_seed(subject=subject, actor=actor)

    with pytest.raises(Conflict) as caught:
        mental_model_create(
            subject=subject, name="who-they-are", description="x", auto_refresh=True, actor=actor
        )

    assert caught.value.field == "name"


def test_another_subjects_model_is_not_found(subject, actor):
    from tests.factories import SubjectFactory

    other = SubjectFactory(app=subject.app)
    mental_models_seed(subject=other, actor=actor)

    with pytest.raises(NotFound):
        mental_model_get(subject=subject, name="who-they-are")


def test_the_llm_path_rewrites_the_model_from_the_evidence(subject, actor, app, openai_wire):
    app_config_set(app=app, config={"memory": {"llm": {"summaries": "openai/gpt-4o-mini"}}}, actor=actor)
    FactFactory(subject=subject, key="name", value="Alice Martin")
    openai_wire.answer_json({"content": "- Alice Martin, who goes by Alice."})

    document = mental_model_create(
        subject=subject, name="who", description="Who the person is: name", auto_refresh=True, actor=actor
    )

    assert document.current.content == "- Alice Martin, who goes by Alice."
    assert document.current.method == "openai/gpt-4o-mini"
    sent = openai_wire.requests[0]["messages"][-1]["content"]
    assert "Name: Alice Martin" in sent and 'Mental model "who"' in sent


def test_the_llm_path_falls_back_to_the_heuristic_when_the_provider_fails(subject, actor, app, openai_wire):
    app_config_set(app=app, config={"memory": {"llm": {"summaries": "openai/gpt-4o-mini"}}}, actor=actor)
    FactFactory(subject=subject, key="name", value="Alice Martin")
    openai_wire.answer_text("not json at all")

    document = mental_model_create(
        subject=subject, name="who", description="Who the person is: name", auto_refresh=True, actor=actor
    )

    assert document.current.content == "- Name: Alice Martin"
    assert document.current.method == "heuristic"


def test_a_summaries_run_refreshes_the_auto_refresh_models(subject, actor, app):
    app_config_set(app=app, config={"memory": {"backend": "local"}}, actor=actor)
    mental_models_seed(subject=subject, actor=actor)
    FactFactory(subject=subject, key="name", value="Alice Martin")

    run = summaries_run(subject=subject, actor=actor)

    assert run.status == "done", run.error
    assert run.stats["mental_models"] == 1
    assert content(subject, "who-they-are") == "- Name: Alice Martin"
