"""The Django admin: every model registered and rendering, history read-only, search, and the
actions (consolidate now, export, re-embed, pause/resume, rotate and revoke keys), each one
done through the services and audited as the staff user."""

import html
import io
import json
import re
import zipfile
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from consolidation.models import DeclinedCluster
from memory.admin.base import HistoryAdmin
from memory.config import get_config
from memory.context import context_build
from memory.models import (
    ApiKey,
    App,
    AuditEvent,
    Consequence,
    ContextCacheEntry,
    Conversation,
    ConversationState,
    ConversationTopic,
    Embedding,
    InteractionContract,
    JobRun,
    Lesson,
    Message,
    Note,
    NoteLink,
    Procedure,
    RetrievalEvent,
    Subject,
)
from memory.services import (
    Actor,
    api_key_create,
    app_config_set,
    fact_set,
    note_store,
    subject_get_or_create,
    vote_cast,
)
from memory.services.admin_keys import admin_key_create
from memory.services.apps import subject_app_pause
from memory.services.beliefs import revision_apply
from memory.services.consent import consent_policy_set
from memory.services.distillation import lesson_distilled_store
from memory.services.links import note_link
from memory.services.metrics import metrics_compute
from memoryweb.demo import DEMO_APP_CONFIG, demo_memory_seed
from memoryweb.models import LiveEvent
from tests.factories import ConversationFactory, MessageFactory

ADMIN_APPS = ("memory", "chat", "consolidation")
ALL_MODELS = [model for label in ADMIN_APPS for model in apps.get_app_config(label).get_models()]

DEPLOY_NOTES = [
    "To deploy the billing api, first run the test suite, then tag the release.",
    "Billing api deploy: first tag the release, then run make deploy from the release branch.",
    "For the billing api deploy, run make deploy and after that check the health endpoint.",
    "Billing api deploy went fine: we ran the migrations first, then restarted the workers.",
]

# the management form of the (read-only) API key inline on the app page, for an app without keys
NO_KEY_FORMS = {"keys-TOTAL_FORMS": "0", "keys-INITIAL_FORMS": "0"}


def _url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def _act(client, model, action: str, objects, **extra):
    return client.post(
        _url(model, "changelist"),
        {"action": action, "_selected_action": [o.pk for o in objects], **extra},
    )


def _audited(action: str, **filters) -> AuditEvent:
    return AuditEvent.objects.get(action=action, actor_kind="user", actor_id="admin", **filters)


@pytest.fixture
def world(app, subject, api_key):
    """At least one row of every model, written the way the product writes them."""
    actor = Actor.system("test")
    app_config_set(app=app, config=DEMO_APP_CONFIG, actor=actor)  # session summaries on, as the demo's
    config = get_config(app)
    demo_memory_seed(subject=subject, actor=actor)  # conversation, facts, notes, links, lesson, pending…
    lesson = Lesson.objects.filter(subject=subject).first()
    notes = [
        note_store(subject=subject, content=text, tags=["deploy"], actor=actor, config=config)[0]
        for text in DEPLOY_NOTES[:2]
    ]
    lesson_distilled_store(
        subject=subject,
        note_ids=[n.pk for n in notes],
        text="Deploy the billing api only after the test suite passes.",
        tags=["deploy"],
        procedure=("Deploy the billing api", ["Run the test suite.", "Tag the release."]),
        distiller="heuristic",
        actor=actor,
    )
    vote_cast(subject=subject, item_kind="lesson", item_id=lesson.pk, signal="up", actor=actor, config=config)
    conversation = Conversation.objects.get(subject=subject)
    context_build(
        subject=subject, message="how is my marathon training?", config=config, conversation=conversation
    )
    consent_policy_set(subject=subject, category="health", policy="ask", actor=actor)
    note = Note.objects.filter(subject=subject).first()
    Embedding.objects.create(
        subject=subject,
        kind="note",
        item_id=note.pk,
        model_id="test/model",
        dim=2,
        vector=b"\0" * 8,
        content_sha256="0" * 64,
    )
    DeclinedCluster.objects.create(subject=subject, signature="f" * 64, size=3, distiller="heuristic")
    ContextCacheEntry.objects.create(
        conversation=conversation, policy_hash="0" * 16, query="marathon", payload={}, generation=0
    )
    ConversationTopic.objects.create(conversation=conversation, label="marathon training", terms=["marathon"])
    fact, _ = fact_set(subject=subject, key="answer_style", value="detailed", actor=actor)
    revision_apply(
        subject=subject, belief=fact, action="REINFORCE", reason="said again", actor=actor, config=config
    )
    InteractionContract.objects.create(
        subject=subject, mode="coding_debug", dimensions={"depth": {"value": "brief", "confidence": 0.6}}
    )
    ConversationState.objects.update_or_create(conversation=conversation, defaults={"urgency": 0.5})
    Consequence.objects.create(
        subject=subject,
        conversation=conversation,
        action="upgrade every package",
        outcome="failure",
        outcome_text="the build broke",
        tendency="fragile to sweeping changes",
    )
    LiveEvent.objects.create(subject_id=subject.pk, event="note.stored", payload={"id": note.pk})
    admin_key_create(name="alice's operator", actor=actor)
    metrics_compute(app=app)
    paused = Subject.objects.create(app=app, external_id="paused-person")
    subject_app_pause(subject=paused, app=app, user=None, actor=actor)
    return subject


def test_every_model_of_memory_chat_and_consolidation_is_registered():
    missing = [model._meta.label for model in ALL_MODELS if model not in admin.site._registry]

    assert missing == []


def test_every_changelist_search_and_change_page_renders_for_staff(admin_client, world):
    failures = []
    for model in ALL_MODELS:
        model_admin = admin.site._registry[model]
        obj = model._default_manager.first()
        if obj is None:
            failures.append(f"{model._meta.label}: the world fixture holds no row")
            continue
        pages = [_url(model, "changelist"), _url(model, "change", obj.pk)]
        if model_admin.search_fields:
            pages.append(_url(model, "changelist") + "?q=alice")
        for page in pages:
            status = admin_client.get(page).status_code
            if status != 200:
                failures.append(f"{page}: {status}")

    assert failures == []


def test_history_cannot_be_added_changed_or_deleted_in_the_admin(admin_client, world):
    for model in (AuditEvent, NoteLink, JobRun, Message):
        assert isinstance(admin.site._registry[model], HistoryAdmin)
    event = AuditEvent.objects.first()
    before = AuditEvent.objects.count()

    add = admin_client.get(_url(AuditEvent, "add"))
    change = admin_client.post(_url(AuditEvent, "change", event.pk), {"action": "tampered"})
    delete = admin_client.post(_url(AuditEvent, "delete", event.pk), {"post": "yes"})

    assert (add.status_code, change.status_code, delete.status_code) == (403, 403, 403)
    event.refresh_from_db()
    assert event.action != "tampered" and AuditEvent.objects.count() == before


def test_superseded_facts_are_listed_as_history_and_filtered_by_active(admin_client, world):
    response = admin_client.get(_url(world.facts.model, "changelist"), {"valid_to__isempty": "1", "q": "Ali"})

    assert response.status_code == 200
    assert "preferred_name" in response.content.decode()


def test_search_finds_notes_by_their_content(admin_client, world):
    response = admin_client.get(_url(Note, "changelist"), {"q": "billing"})

    shown = {n.pk for n in response.context["cl"].result_list}
    assert shown and shown == set(
        Note.objects.filter(content__icontains="billing").values_list("pk", flat=True)
    )


def test_search_finds_subjects_by_their_owner(admin_client, app):
    owner = get_user_model().objects.create_user(username="ines")
    owned = Subject.objects.create(app=app, external_id="ines-subject", owner=owner)
    Subject.objects.create(app=app, external_id="someone-else")

    response = admin_client.get(_url(Subject, "changelist"), {"q": "ines"})

    assert list(response.context["cl"].result_list) == [owned]


def test_the_subject_page_links_to_its_memory_and_each_link_lists_only_that_subject(admin_client, world):
    other = subject_get_or_create(app=world.app, external_id="bob")
    note_store(
        subject=other, content="Bob swims on Mondays", actor=Actor.system("t"), config=get_config(world.app)
    )
    page = admin_client.get(_url(Subject, "change", world.pk)).content.decode()

    links = re.findall(r'<a href="([^"]+)">(\d+) (active facts|notes|pending items|conversations)</a>', page)

    assert {label for _, _, label in links} == {"active facts", "notes", "pending items", "conversations"}
    for href, count, label in links:
        listed = admin_client.get(html.unescape(href)).context["cl"].queryset
        assert listed.count() == int(count) > 0, label
        assert {row.subject_id for row in listed} == {world.pk}, label


def test_the_conversation_page_links_to_its_messages(admin_client, world):
    conversation = Conversation.objects.get(subject=world)
    MessageFactory(conversation=ConversationFactory(subject=world))  # another conversation's message
    page = admin_client.get(_url(Conversation, "change", conversation.pk)).content.decode()

    href = re.search(r'<a href="([^"]+)">\d+ messages</a>', page).group(1)
    listed = admin_client.get(html.unescape(href)).context["cl"].queryset

    assert set(listed) == set(Message.objects.filter(conversation=conversation))


def test_consolidate_now_distils_linked_notes_records_a_job_run_and_is_audited(
    admin_client, subject, config, eager_tasks, django_capture_on_commit_callbacks
):
    actor = Actor.system("test")
    for text in DEPLOY_NOTES:
        note, _ = note_store(
            subject=subject, content=text, tags=["deploy", "billing"], actor=actor, config=config
        )
        note_link(note_id=note.pk)

    with django_capture_on_commit_callbacks(execute=True):
        response = _act(admin_client, Subject, "consolidate_now", [subject])

    assert response.status_code == 302
    run = JobRun.objects.get(subject=subject, kind="consolidate")
    assert run.status == "done" and run.stats["lessons"] == 1
    assert Lesson.objects.filter(subject=subject).count() == 1
    assert not Note.objects.filter(subject=subject, archived_at=None).exists()
    event = _audited("subject.consolidation_requested", subject=subject)
    assert event.object_id == str(run.pk)


def test_consolidate_now_answers_before_the_run_and_names_the_queued_run(admin_client, subject):
    response = _act(admin_client, Subject, "consolidate_now", [subject])

    assert response.status_code == 302
    run = JobRun.objects.get(subject=subject, kind="consolidate")
    assert run.status == "queued"
    page = admin_client.get(response["Location"])
    assert f"consolidation queued (job run {run.pk})" in page.content.decode()


def test_export_of_one_subject_downloads_its_json_and_is_audited(admin_client, world):
    response = _act(admin_client, Subject, "export_json", [world])

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"] == f'attachment; filename="memoryweb-{world.app.name}-alice.json"'
    data = json.loads(response.content)
    assert data["subject"] == "alice"
    assert {f["key"] for f in data["facts"]} >= {"preferred_name", "location"}
    assert len(data["notes"]) == Note.objects.filter(subject=world).count()
    _audited("subject.exported", subject=world)


def test_export_of_several_subjects_is_a_zip_with_one_json_each(admin_client, app, subject):
    bob = subject_get_or_create(app=app, external_id="bob")

    response = _act(admin_client, Subject, "export_json", [subject, bob])

    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = sorted(archive.namelist())
    assert names == [f"memoryweb-{app.name}-alice.json", f"memoryweb-{app.name}-bob.json"]
    assert json.loads(archive.read(names[1]))["subject"] == "bob"
    assert AuditEvent.objects.filter(action="subject.exported", actor_id="admin").count() == 2


@pytest.fixture
def embeddings_wire():
    from memory.embeddings import set_http_client_factory
    from memory.search.vectors.query import provider_reset
    from tests.embeddings_wire import EmbeddingsWire

    provider_reset()
    wire = EmbeddingsWire(dim=8)
    previous = set_http_client_factory(wire.client)
    yield wire
    set_http_client_factory(previous)
    provider_reset()


def test_reembed_writes_the_vectors_of_the_subjects_notes_and_is_audited(admin_client, db, embeddings_wire):
    app = App.objects.create(
        name="embedding-app",
        config={
            "memory": {
                "embeddings": {
                    "provider": "openai-compatible",
                    "baseUrl": "http://embed.test/v1",
                    "model": "tiny",
                }
            }
        },
    )
    subject = subject_get_or_create(app=app, external_id="alice")
    other = subject_get_or_create(app=app, external_id="bob")
    config = get_config(app)
    actor = Actor.system("test")
    for text in ("Alice keeps her running shoes by the door", "Alice runs before work"):
        note_store(subject=subject, content=text, actor=actor, config=config)  # embedding waits for a task
    note_store(subject=other, content="Bob swims on Mondays", actor=actor, config=config)

    response = _act(admin_client, Subject, "reembed", [subject])

    assert response.status_code == 302
    assert set(Embedding.objects.values_list("subject_id", flat=True)) == {subject.pk}
    assert Embedding.objects.filter(subject=subject, dim=8).count() == 2
    assert sorted(embeddings_wire.bodies[0]["input"]) == [
        "Alice keeps her running shoes by the door",
        "Alice runs before work",
    ]
    _audited("subject.reembedded", subject=subject)


def test_reembed_says_so_when_embeddings_are_off_and_writes_nothing(admin_client, subject):
    response = admin_client.post(
        _url(Subject, "changelist"), {"action": "reembed", "_selected_action": [subject.pk]}, follow=True
    )

    assert "Embeddings are off" in response.content.decode()
    assert not Embedding.objects.exists()
    assert not AuditEvent.objects.filter(action="subject.reembedded").exists()


def test_pausing_an_app_refuses_its_keys_with_a_clear_403_and_resuming_lets_them_in(
    admin_client, app, api_key, subject
):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")

    _act(admin_client, App, "pause_apps", [app])
    paused = api.get("/api/v1/subjects/alice/profile")
    _act(admin_client, App, "resume_apps", [app])
    resumed = api.get("/api/v1/subjects/alice/profile")

    assert paused.status_code == 403 and paused.json()["error"]["message"] == "this app is paused"
    assert resumed.status_code == 200
    app.refresh_from_db()
    assert app.paused is False
    _audited("app.paused", app=app)
    _audited("app.resumed", app=app)


def test_the_app_list_counts_active_keys_and_subjects(admin_client, app, api_key, subject):
    revoked, _ = api_key_create(app=app, actor=Actor.system("t"))
    revoked.revoked_at = revoked.created_at
    revoked.save()
    subject_get_or_create(app=app, external_id="bob")

    response = admin_client.get(_url(App, "changelist"))

    row = next(a for a in response.context["cl"].result_list if a.pk == app.pk)
    assert (row._active_keys, row._subjects) == (1, 2)


def test_pausing_an_app_twice_writes_one_audit_event(admin_client, app):
    _act(admin_client, App, "pause_apps", [app])
    _act(admin_client, App, "pause_apps", [app])

    assert AuditEvent.objects.filter(action="app.paused", app=app).count() == 1


def test_rotating_the_key_shows_the_new_one_once_and_the_old_one_works_until_the_overlap_ends(
    admin_client, app, api_key, subject, settings
):
    settings.MEMORYWEB_API_KEY_OVERLAP = 3600
    old_prefix = api_key.split("_")[1]
    start = timezone.now()

    response = _act(admin_client, App, "rotate_api_key", [app])

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    new_key = ApiKey.objects.get(app=app, expires_at=None)
    raw_key = response.context["rotated"][0]["rotation"].raw_key
    assert f'<code class="new-api-key">{raw_key}</code>' in response.content.decode()
    assert new_key.key_hash == ApiKey.hash_secret(raw_key)
    old = ApiKey.objects.get(prefix=old_prefix)
    assert old.revoked_at is None
    assert timedelta(seconds=3600) <= old.expires_at - start < timedelta(seconds=3660)
    assert not any(raw_key in morsel.value for morsel in response.cookies.values())  # not kept anywhere
    assert raw_key not in admin_client.get(_url(App, "change", app.pk)).content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert api.get("/api/v1/subjects/alice/profile").status_code == 200  # within the overlap
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    assert api.get("/api/v1/subjects/alice/profile").status_code == 200
    event = _audited("api_key.rotated", app=app)
    assert event.object_id == new_key.prefix
    assert event.data == {"revoked": [], "expiring": [old_prefix], "expires_at": old.expires_at.isoformat()}


def test_rotating_the_key_now_revokes_the_old_one(admin_client, app, api_key, subject):
    old_prefix = api_key.split("_")[1]

    response = _act(admin_client, App, "rotate_api_key_now", [app])

    raw_key = response.context["rotated"][0]["rotation"].raw_key
    assert ApiKey.objects.get(prefix=old_prefix).revoked_at is not None
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert api.get("/api/v1/subjects/alice/profile").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    assert api.get("/api/v1/subjects/alice/profile").status_code == 200
    assert _audited("api_key.rotated", app=app).data["revoked"] == [old_prefix]
    _audited("api_key.revoked", app=app, object_id=old_prefix)


def test_a_keys_rate_limit_is_edited_in_the_admin_through_the_service(admin_client, app, api_key):
    key = ApiKey.objects.get(app=app)

    refused = admin_client.post(_url(ApiKey, "change", key.pk), {"rate_limit": "lots"})
    saved = admin_client.post(_url(ApiKey, "change", key.pk), {"rate_limit": "30/minute"})

    assert refused.status_code == 200 and "not a rate" in refused.content.decode()
    assert saved.status_code == 302
    key.refresh_from_db()
    assert key.rate_limit == "30/minute"
    assert _audited("api_key.rate_limit_set", object_id=key.prefix).data == {"rate_limit": "30/minute"}


def test_revoking_keys_in_the_admin_is_audited(admin_client, app, api_key):
    key = ApiKey.objects.get(app=app)

    _act(admin_client, ApiKey, "revoke_keys", [key])

    key.refresh_from_db()
    assert key.revoked_at is not None
    _audited("api_key.revoked", object_id=key.prefix)


def test_creating_an_app_in_the_admin_goes_through_the_service(admin_client, db):
    response = admin_client.post(_url(App, "add"), {"name": "support-bot", "config": "{}", **NO_KEY_FORMS})

    assert response.status_code == 302
    app = App.objects.get(name="support-bot")
    _audited("app.created", app=app)


def test_an_unknown_config_key_is_refused_by_name_and_a_valid_one_is_audited(admin_client, app):
    bad = admin_client.post(
        _url(App, "change", app.pk),
        {"config": json.dumps({"memory": {"links": {"depth": 2}}}), **NO_KEY_FORMS},
    )
    good = admin_client.post(
        _url(App, "change", app.pk),
        {"config": json.dumps({"memory": {"links": {"expansionDepth": 2}}}), **NO_KEY_FORMS},
    )

    assert bad.status_code == 200 and "expansionDepth" in bad.content.decode()
    assert good.status_code == 302
    app.refresh_from_db()
    assert app.config == {"memory": {"links": {"expansionDepth": 2}}}
    assert _audited("app.config_set", app=app).data == app.config


def test_giving_a_subject_an_owner_in_the_admin_is_audited(admin_client, subject):
    owner = get_user_model().objects.create_user(username="alice-login")

    response = admin_client.post(
        _url(Subject, "change", subject.pk), {"display_name": "Alice", "owner": owner.pk}
    )

    assert response.status_code == 302
    subject.refresh_from_db()
    assert (subject.owner, subject.display_name) == (owner, "Alice")
    assert _audited("subject.updated", subject=subject).data == {
        "display_name": "Alice",
        "owner": "alice-login",
    }


def test_deleting_a_note_in_the_admin_forgets_it_through_the_service(admin_client, subject, config):
    note, _ = note_store(
        subject=subject,
        content="Alice's locker code is in her notebook",
        actor=Actor.system("t"),
        config=config,
    )

    response = admin_client.post(_url(Note, "delete", note.pk), {"post": "yes"})

    assert response.status_code == 302
    assert not Note.objects.filter(pk=note.pk).exists()
    _audited("note.forgotten", object_id=str(note.pk))


def test_deleting_a_subject_in_the_admin_deletes_its_memory_and_keeps_one_audit_record(admin_client, world):
    subject_id = world.pk

    _act(admin_client, Subject, "delete_selected", [world], post="yes")

    assert not Subject.objects.filter(pk=subject_id).exists()
    assert not Note.objects.filter(subject_id=subject_id).exists()
    assert not Procedure.objects.filter(subject_id=subject_id).exists()
    _audited("subject.deleted", object_id=str(subject_id))


def test_people_who_are_not_staff_are_sent_to_the_admin_login(db):
    person = get_user_model().objects.create_user(username="someone", password="pw-123456789")
    anonymous, logged_in = Client(), Client()
    logged_in.force_login(person)

    for client in (anonymous, logged_in):
        response = client.get(_url(Note, "changelist"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))


def test_every_model_has_a_plural_a_person_would_write():
    # Django only adds an "s": "context deliverys", "pending memorys"
    plurals = [str(model._meta.verbose_name_plural) for model in ALL_MODELS]
    wrong = [plural for plural in plurals if re.search(r"([^aeiou]ys|ss|xs|chs|shs)$", plural)]

    assert wrong == []
    assert {"context deliveries", "pending memories"} <= set(plurals)


def test_the_retrieval_list_shows_latency_rounded(admin_client, world):
    RetrievalEvent.objects.update(latency_ms=3.5307609999790657)
    page = admin_client.get(_url(RetrievalEvent, "changelist")).content.decode()

    assert "3.5 ms" in page and "3.5307" not in page
