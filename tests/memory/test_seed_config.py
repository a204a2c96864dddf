"""The seed configuration as written: both documented blocks load, from the MEMORYWEB_CONFIG
file and per App, and every key acts — each `enabled` switches its phase off for real."""

import json
from datetime import UTC, datetime

import pytest
from django.utils import timezone

from chat.models import ReflectionRun
from chat.reflect import reflection_enqueue, turn_reflect
from consolidation.services import consolidate_all, consolidate_now, votes_decay
from memory.config import base_config, get_config, validate_app_config
from memory.context import context_build, phase_config
from memory.models import Embedding, JobRun, Lesson, Note, NoteLink, Procedure, ProfileFact, VoteEvent
from memory.ranking import rank_notes
from memory.rewriter import rewrite_query
from memory.search.lexical import NoteFilter
from memory.search.vectors.query import provider_reset
from memory.services import app_config_set, fact_set, note_store, note_store_and_embed
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.links import note_link
from memoryweb.errors import ConfigError, FeatureDisabled
from memoryweb.models import TaskIntent
from tests.embeddings_wire import EmbeddingsWire
from tests.factories import AppFactory, NoteFactory, SubjectFactory

SEED_CONTEXT = {
    "memory": {
        "profile": {"enabled": True, "maxTokens": 512, "contextualKeywordGate": True},
        "notes": {"enabled": True, "maxEntries": 1000, "recallDefaultK": 5},
        "recallInjection": {"enabled": True, "k": 3, "maxTokens": 400},
        "index": {"enabled": True, "limit": 20, "maxTokens": 300},
        "reflection": {"enabled": True, "maxFactsPerCall": 3, "maxNotesPerCall": 2},
    }
}
SEED_FABRIC = {
    "memory": {
        "dedup": {"enabled": True, "fts5Threshold": 0.85},
        "embeddings": {"enabled": False},
        "links": {"enabled": True, "expansionDepth": 1, "maxExpanded": 12},
        "evolution": {"enabled": True},
        "lessons": {"enabled": True},
        "procedures": {"enabled": True},
        "consolidation": {"enabled": True, "minClusterSize": 3, "requireSharedTag": True},
        "voting": {"enabled": True, "signalDecay": 0.95},
        "retrieve": {"rewriter": {"enabled": True, "gateMode": "heuristic"}},
    }
}
DEPLOY = [
    "Deploy steps for the billing app: first back up the database, then run the migrations on "
    "staging, then switch the traffic.",
    "Deploy steps that worked: first I backed up the database, then ran the migrations on staging, "
    "after that switched the traffic and finally watched the error rate for ten minutes.",
    "The staging deploy of the billing app went fine after running the migrations first.",
    "Deploy of the billing app: back up the database first, then migrations, then the traffic switch.",
]


def leaves(document: dict, prefix: str = "memory") -> dict:
    """{"memory.notes.maxEntries": 1000, …} for every value the document sets."""
    flat = {}
    for key, value in document.items():
        if isinstance(value, dict):
            flat.update(leaves(value, f"{prefix}.{key}" if prefix else key))
        else:
            flat[f"{prefix}.{key}"] = value
    return flat


def with_config(app, actor, tree: dict):
    app_config_set(app=app, config={"memory": tree}, actor=actor)
    app.refresh_from_db()
    return get_config(app)


def tail(context) -> str:
    return context.as_dict()["tail"]


# --- loading --------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [SEED_CONTEXT, SEED_FABRIC], ids=["context", "fabric"])
def test_a_seed_block_loads_from_the_memoryweb_config_file(block, tmp_path, settings):
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(block))
    settings.MEMORYWEB_CONFIG = str(path)

    config = get_config()

    assert {key: config[key] for key in leaves(block["memory"], "")} == leaves(block["memory"], "")
    assert base_config()["notes"]["maxChars"] == 4000  # the keys it does not name keep their defaults


@pytest.mark.parametrize("block", [SEED_CONTEXT, SEED_FABRIC], ids=["context", "fabric"])
def test_a_seed_block_loads_as_an_app_config(block, db, actor):
    app = AppFactory()

    config = with_config(app, actor, block["memory"])

    assert {key: config[key] for key in leaves(block["memory"], "")} == leaves(block["memory"], "")
    assert app.config == block
    assert get_config()["notes.maxEntries"] == 10000  # other apps keep the defaults


def test_the_old_memory_index_name_is_read_into_index(db):
    tree = validate_app_config({"memory": {"memoryIndex": {"maxEntries": 4, "maxTokens": 120}}})
    app = AppFactory(config={"memory": tree})

    config = get_config(app)

    assert config["index.limit"] == 4 and config["index.maxTokens"] == 120
    assert config["index.gistChars"] == 72 and "memoryIndex" not in config.as_dict()["memory"]


def test_where_both_names_set_a_key_index_wins(db):
    app = AppFactory(config={"memory": {"memoryIndex": {"maxEntries": 4}, "index": {"limit": 7}}})

    assert get_config(app)["index.limit"] == 7


def test_the_old_memory_index_name_works_in_the_environment(monkeypatch, db):
    monkeypatch.setenv("MEMORY__MEMORYINDEX__MAXENTRIES", "5")

    assert get_config()["index.limit"] == 5


def test_a_misspelt_key_under_the_old_name_gets_a_did_you_mean(db):
    with pytest.raises(ConfigError) as error:
        validate_app_config({"memory": {"memoryIndex": {"maxEntry": 3}}})

    assert (
        str(error.value) == "unknown configuration key memory.memoryIndex.maxEntry — did you mean maxEntries?"
    )


def test_a_misspelt_index_key_gets_a_did_you_mean(db):
    with pytest.raises(ConfigError, match=r"memory.index.limits — did you mean limit\?"):
        validate_app_config({"memory": {"index": {"limits": 3}}})


def test_an_unknown_gate_mode_is_an_error_naming_the_key_and_the_choices(db):
    with pytest.raises(ConfigError) as error:
        validate_app_config({"memory": {"retrieve": {"rewriter": {"gateMode": "alway"}}}})

    assert str(error.value) == (
        "memory.retrieve.rewriter.gateMode must be one of heuristic, always, never, got 'alway'"
        " — did you mean always?"
    )
    assert error.value.key == "memory.retrieve.rewriter.gateMode"


def test_recall_default_k_out_of_range_is_an_error_naming_the_key(db):
    with pytest.raises(ConfigError, match="memory.notes.recallDefaultK must be between 1 and 100, got 0"):
        validate_app_config({"memory": {"notes": {"recallDefaultK": 0}}})


# --- profile --------------------------------------------------------------------------------


@pytest.fixture
def profiled(subject, actor):
    fact_set(subject=subject, key="name", value="Alice", actor=actor)
    fact_set(subject=subject, key="allergy", value="peanuts", pinned=False, keywords=["food"], actor=actor)
    return subject


def test_profile_off_leaves_the_profile_out_of_the_context(profiled, app, actor):
    config = with_config(app, actor, {"profile": {"enabled": False}})

    context = context_build(subject=profiled, message="any food tips?", config=config)

    assert "### profile" not in tail(context) and "Alice" not in tail(context)
    assert not [i for i in context.items if i.kind == "fact"]


def test_profile_off_reflection_extracts_no_facts_but_still_notes(subject, app, actor):
    with_config(app, actor, {"profile": {"enabled": False}})
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    message_add(
        conversation=conversation,
        role="user",
        actor=actor,
        occurred_at=when,
        text="Call me Sam. I work at Acme as a data engineer. Yesterday I adopted a puppy named Rex.",
    )
    reply, _ = message_add(
        conversation=conversation, role="assistant", actor=actor, occurred_at=when, text="Hi!"
    )

    stats = turn_reflect(run_id=reflection_enqueue(conversation=conversation, through_message=reply).pk)

    assert stats["facts"] == 0 and not ProfileFact.objects.filter(subject=subject).exists()
    assert stats["notes"] >= 1 and Note.objects.filter(subject=subject, origin="reflection").exists()


def test_without_the_keyword_gate_contextual_facts_render_without_a_hit(profiled, app, actor):
    gated = get_config(app)
    ungated = with_config(app, actor, {"profile": {"contextualKeywordGate": False}})

    before = context_build(subject=profiled, message="what is the weather like?", config=gated)
    after = context_build(subject=profiled, message="what is the weather like?", config=ungated)

    assert "allergy" not in tail(before)
    assert "- name: Alice\n- allergy: peanuts" in tail(after)
    assert [i.reason for i in after.items if i.kind == "fact"] == ["pinned", "contextual (keyword gate off)"]


# --- recalled and the memory index ----------------------------------------------------------


@pytest.fixture
def lisbon(subject, actor, config):
    for text in [
        "Alice's favourite restaurant is Taberna do Mar in Lisbon",
        "Alice had sushi with Bob at a Lisbon restaurant in May",
        "Lisbon trip: Alice booked the flight for March 3rd",
        "The Lisbon restaurant outing was cancelled because of rain",
        "Alice wants to try a new restaurant in Lisbon next month",
    ]:
        note_store(subject=subject, content=text, actor=actor, config=config)
    return subject


def test_recall_injection_off_sends_no_recalled_section(lisbon, app, actor):
    config = with_config(app, actor, {"recallInjection": {"enabled": False}})

    context = context_build(subject=lisbon, message="restaurant in Lisbon", config=config, k=3)

    assert "### recalled" not in tail(context) and "### memory-index" in tail(context)
    assert {i.section for i in context.items if i.kind == "note"} == {"memory-index"}
    assert Note.objects.filter(subject=lisbon, recall_count__gt=0).count() == 0


def test_index_off_sends_no_memory_index_section(lisbon, app, actor):
    config = with_config(app, actor, {"index": {"enabled": False}})

    context = context_build(subject=lisbon, message="restaurant in Lisbon", config=config)

    assert "### memory-index" not in tail(context) and "### recalled" in tail(context)
    assert {i.section for i in context.items if i.kind == "note"} == {"recalled"}


def test_index_limit_caps_the_pointers(lisbon, app, actor):
    config = with_config(app, actor, {"recallInjection": {"k": 1}, "index": {"limit": 2}})

    context = context_build(subject=lisbon, message="restaurant in Lisbon", config=config)

    assert len([i for i in context.items if i.section == "memory-index"]) == 2


# --- reflection, dedup, evolution -----------------------------------------------------------


def test_reflection_off_posting_turns_extracts_nothing(
    client, subject, app, actor, eager_tasks, django_capture_on_commit_callbacks
):
    with_config(app, actor, {"reflection": {"enabled": False}})
    conversation = client.post(
        "/api/v1/conversations", {"subject": "alice", "external_id": "c"}, format="json"
    ).json()
    client.post(
        f"/api/v1/conversations/{conversation['id']}/messages",
        {"text": "Call me Sam. I work at Acme as a data engineer."},
        format="json",
    )

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/v1/conversations/{conversation['id']}/responses", {"text": "Hi Sam!"}, format="json"
        )

    assert response.status_code == 201
    run = ReflectionRun.objects.get(conversation_id=conversation["id"])
    assert run.status == "done" and run.stats["source"] == "none"
    assert not ProfileFact.objects.filter(subject=subject).exists()
    assert not Note.objects.filter(subject=subject).exists()


def test_dedup_off_stores_a_repeated_note_twice(subject, app, actor):
    config = with_config(app, actor, {"dedup": {"enabled": False}})
    text = "Alice's favourite restaurant is Taberna do Mar in Lisbon"

    first, _ = note_store(subject=subject, content=text, actor=actor, config=config)
    second, created = note_store(subject=subject, content=text, actor=actor, config=config)

    assert created and first.pk != second.pk
    assert Note.objects.filter(subject=subject, content=text).count() == 2


def test_evolution_off_leaves_an_existing_notes_tags_alone(subject, app, actor, openai_wire):
    config = with_config(
        app, actor, {"evolution": {"enabled": False}, "llm": {"reflection": "openai/gpt-4o-mini"}}
    )
    note, _ = note_store(
        subject=subject, content="Alice lives in Lisbon now", tags=["home"], actor=actor, config=config
    )
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    reply, _ = message_add(conversation=conversation, role="assistant", actor=actor, text="Noted!")
    openai_wire.answer_json(
        {
            "facts": [],
            "notes": [],
            "retractions": [],
            "evolutions": [{"message": 1, "note_id": note.pk, "add_tags": ["relocation"], "remove_tags": []}],
        }
    )

    stats = turn_reflect(run_id=reflection_enqueue(conversation=conversation, through_message=reply).pk)

    note.refresh_from_db()
    assert stats["evolved"] == 0 and note.tags == ["home"] and note.versions.count() == 1


# --- embeddings and links -------------------------------------------------------------------


@pytest.fixture
def embeddings_wire():
    from memory.embeddings import set_http_client_factory

    provider_reset()
    wire = EmbeddingsWire(dim=8)
    previous = set_http_client_factory(wire.client)
    yield wire
    set_http_client_factory(previous)
    provider_reset()


def test_embeddings_off_computes_and_uses_no_vectors_though_a_provider_is_set(
    db, actor, embeddings_wire, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-embeddings")
    app = AppFactory(
        config={"memory": {"embeddings": {"provider": "openai", "dimensions": 8, "enabled": False}}}
    )
    subject = SubjectFactory(app=app)
    config = get_config(app)

    note, _, embedded = note_store_and_embed(
        subject=subject, content="Alice adopted a puppy named Rex", actor=actor, config=config
    )
    context = context_build(subject=subject, message="tell me about the dog", config=config)

    assert not Embedding.objects.exists() and embeddings_wire.requests == []
    assert all("similar meaning" not in i.reason for i in context.items)


def test_links_off_writes_no_links_and_expands_none(subject, app, actor):
    config = get_config(app)
    shown, _ = note_store(
        subject=subject, content="Alice booked a Lisbon hotel near Alfama", actor=actor, config=config
    )
    hidden = NoteFactory(subject=subject, content="Her cousin Marta works at the bakery downstairs")
    NoteLink.objects.create(src=shown, dst=hidden, kind="related", weight=1.0)
    on = context_build(subject=subject, message="the Lisbon hotel", config=config)
    off = with_config(app, actor, {"links": {"enabled": False}})
    again, _ = note_store(
        subject=subject, content="Alice liked the Lisbon hotel breakfast", actor=actor, config=off
    )

    context = context_build(subject=subject, message="the Lisbon hotel", config=off)

    assert f"n:{hidden.pk}" in tail(on)  # the control: expansion reaches it with links on
    assert f"n:{hidden.pk}" not in tail(context) and not [i for i in context.items if i.expanded]
    assert note_link(note_id=again.pk) == {"note": again.pk, "skipped": "links disabled"}
    assert NoteLink.objects.count() == 1


# --- lessons, procedures, consolidation -----------------------------------------------------


@pytest.fixture
def distilled(subject):
    lesson = Lesson.objects.create(subject=subject, text="Deploys are safest on Tuesday mornings.")
    procedure = Procedure.objects.create(
        subject=subject, title="Deploy the api", steps=["Run the test suite.", "Run make deploy."]
    )
    return lesson, procedure


def linked_cluster(subject):
    notes = [NoteFactory(subject=subject, content=text, tags=["deploy"]) for text in DEPLOY]
    for a, b in zip(notes, notes[1:], strict=False):
        NoteLink.objects.create(src=a, dst=b, kind="related")
    return notes


def test_lessons_off_leaves_the_section_out_and_consolidation_distils_nothing(distilled, subject, app, actor):
    lesson, procedure = distilled
    config = with_config(app, actor, {"lessons": {"enabled": False}})
    notes = linked_cluster(subject)

    context = context_build(subject=subject, message="how should I deploy the api on Tuesday?", config=config)
    with pytest.raises(FeatureDisabled, match=r"memory.lessons.enabled is false"):
        consolidate_now(subject=subject, actor=actor)

    assert "### lessons" not in tail(context) and f"[p:{procedure.pk}]" in tail(context)
    assert list(Lesson.objects.all()) == [lesson] and not JobRun.objects.exists()
    assert Note.objects.filter(pk__in=[n.pk for n in notes], archived_at__isnull=True).count() == len(notes)


def test_procedures_off_leaves_the_section_out_and_lessons_come_without_one(distilled, subject, app, actor):
    lesson, procedure = distilled
    config = with_config(app, actor, {"procedures": {"enabled": False}})
    linked_cluster(subject)

    context = context_build(subject=subject, message="how should I deploy the api on Tuesday?", config=config)
    job = consolidate_now(subject=subject, actor=actor)

    assert "### procedures" not in tail(context) and f"[l:{lesson.pk}]" in tail(context)
    assert job.stats["lessons"] == 1 and job.stats["procedures"] == 0
    assert list(Procedure.objects.all()) == [procedure]
    assert Lesson.objects.exclude(pk=lesson.pk).get().procedures.count() == 0


def test_consolidation_off_runs_nothing(subject, app, actor, client):
    with_config(app, actor, {"consolidation": {"enabled": False}})
    notes = linked_cluster(subject)

    response = client.post("/api/v1/subjects/alice/consolidate")
    with pytest.raises(FeatureDisabled):
        consolidate_now(subject=subject, actor=actor)

    assert response.status_code == 409
    assert response.json()["error"] == {
        "code": "disabled",
        "message": "consolidation is switched off for this app (memory.consolidation.enabled is false)",
        "field": "memory.consolidation.enabled",
        "fields": {
            "memory.consolidation.enabled": "consolidation is switched off for this app "
            "(memory.consolidation.enabled is false)"
        },
    }
    assert not Lesson.objects.exists() and not JobRun.objects.exists()
    assert not Note.objects.filter(pk__in=[n.pk for n in notes], archived_at__isnull=False).exists()


def test_the_periodic_sweep_skips_subjects_of_apps_with_consolidation_off(
    app, actor, django_capture_on_commit_callbacks
):
    mine = SubjectFactory(app=app)
    other = SubjectFactory(app=AppFactory(config={"memory": {"consolidation": {"enabled": False}}}))
    linked_cluster(mine)
    linked_cluster(other)

    with django_capture_on_commit_callbacks(execute=False):
        sweep = consolidate_all(owner="test")

    # each started consolidation is a task in the outbox, saved with the run that needs it
    tasks = TaskIntent.objects.filter(task="consolidation.consolidate_subject")
    assert sweep.stats["subjects_started"] == 1 and [t.args[0] for t in tasks] == [mine.pk]


# --- voting ---------------------------------------------------------------------------------


def test_voting_off_refuses_votes_and_decay_leaves_the_scores(subject, app, actor, client):
    with_config(app, actor, {"voting": {"enabled": False}})
    note = NoteFactory(subject=subject, content="Alice likes tea", vote_score=2.0)

    response = client.post(
        "/api/v1/subjects/alice/votes", {"item": f"n:{note.pk}", "signal": "up"}, format="json"
    )
    job = votes_decay(actor=actor, app=app, force=True)

    assert response.status_code == 409
    assert response.json()["error"]["message"] == (
        "voting is switched off for this app (memory.voting.enabled is false)"
    )
    assert not VoteEvent.objects.exists()
    assert Note.objects.get(pk=note.pk).vote_score == 2.0
    assert job.stats["voting_off_apps"] == [app.pk] and job.stats["factors"] == []


def test_voting_off_vote_scores_stop_counting_in_the_ranking(subject, app, actor):
    config = get_config(app)
    plain, _ = note_store(
        subject=subject, content="Alice drinks green tea at work", actor=actor, config=config
    )
    voted, _ = note_store(
        subject=subject, content="Alice drinks black tea at home", actor=actor, config=config
    )
    Note.objects.filter(pk=voted.pk).update(vote_score=5.0)
    off = with_config(app, actor, {"voting": {"enabled": False}})

    def ranker_scores(settings) -> dict:
        # the ranker's own scores, as the context builder configures it (before applicability)
        ranked = rank_notes(
            subject_id=subject.pk,
            query="tea",
            terms=["tea"],
            filters=NoteFilter(scopes=None),
            config=phase_config(settings),
            now=timezone.now(),
        )
        return {note.pk: score for note, score, _ in ranked}

    scored_on, scored_off = ranker_scores(config), ranker_scores(off)

    lift_on = scored_on[voted.pk] - scored_on[plain.pk]
    lift_off = scored_off[voted.pk] - scored_off[plain.pk]
    assert lift_on - lift_off == pytest.approx(0.1, abs=1e-3)  # scoring.votes × 5/5


# --- the rewriter gate and explicit recall --------------------------------------------------


@pytest.fixture
def history(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    for role, text in [
        ("user", "Should we use Postgres or SQLite for the billing service?"),
        ("assistant", "Postgres fits the billing service better: concurrent writers."),
    ]:
        message_add(conversation=conversation, role=role, text=text, actor=actor)
    return conversation


def test_gate_mode_always_expands_a_long_specific_message(history, app, actor):
    config = with_config(app, actor, {"retrieve": {"rewriter": {"gateMode": "always"}}})
    message = "Which database did we pick for the billing service after comparing write throughput?"

    query, how = rewrite_query(message=message, conversation=history, config=config)

    assert how == "heuristic" and query.startswith(message) and "postgr" in query.lower()


def test_gate_mode_never_leaves_a_referential_message_as_typed(history, app, actor):
    config = with_config(app, actor, {"retrieve": {"rewriter": {"gateMode": "never"}}})

    assert rewrite_query(message="and that?", conversation=history, config=config) == ("and that?", "none")


def test_explicit_recall_without_k_returns_recall_default_k_notes(lisbon, app, actor, client):
    with_config(app, actor, {"notes": {"recallDefaultK": 2}})

    default = client.get("/api/v1/subjects/alice/notes", {"query": "Lisbon"}).json()["notes"]
    asked = client.get("/api/v1/subjects/alice/notes", {"query": "Lisbon", "k": 4}).json()["notes"]

    assert len(default) == 2 and len(asked) == 4
    assert Note.objects.filter(subject=lisbon, recall_count__gt=0).count() == 4
