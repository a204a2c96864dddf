"""The admin routes under /api/v1/admin/ (docs/admin-api.md): an admin key reaches each, an app's
key, a revoked key or none is refused, input is strict, and a replay writes nothing but shows
what an ablation would have chosen differently."""

import pytest
from django.apps import apps
from django.core.management import call_command
from rest_framework.test import APIClient

from memory.context import context_build
from memory.models import AdminKey, AuditEvent, MetricSnapshot, Note, RetrievalEvent
from memory.services import note_store
from memory.services.admin_keys import admin_key_create, admin_key_revoke
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.links import note_link
from memoryweb.urls import admin_api_patterns, api_patterns

# shares no word with the conversation: only the link from the deploy note brings it in
LINKED = "The staging checklist covers smoke tests and rollback drills."


@pytest.fixture
def admin_raw(db, actor):
    return admin_key_create(name="ops", actor=actor)[1]


@pytest.fixture
def admin(admin_raw):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {admin_raw}")
    return c


@pytest.fixture
def world(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    message_add(
        conversation=conversation, role="user", text="we deploy the billing api on fridays", actor=actor
    )
    message_add(
        conversation=conversation, role="assistant", text="noted: billing api deploys on fridays", actor=actor
    )
    message_add(conversation=conversation, role="user", text="what about it?", actor=actor)
    first = note_store(
        subject=subject,
        content="The billing api deploy runs on fridays after the staging checklist.",
        tags=["ops"],
        actor=actor,
        config=config,
    )[0]
    second = note_store(subject=subject, content=LINKED, tags=["ops"], actor=actor, config=config)[0]
    note_link(note_id=first.pk, config=config)
    note_link(note_id=second.pk, config=config)
    context = context_build(
        subject=subject, message="what about it?", config=config, conversation=conversation
    )
    return {"conversation": conversation, "event": context.retrieval_event_id, "subject": subject}


def _rows() -> dict:
    counts = {
        m._meta.label: m._default_manager.count()
        for label in ("memory", "chat", "consolidation")
        for m in apps.get_app_config(label).get_models()
    }
    counts["recalls"] = sorted(Note.objects.values_list("pk", "recall_count", "last_recalled_at"))
    return counts


def _routes(world) -> list[tuple[str, str, str, dict | None]]:
    """(url name, method, path, body) of every admin route: the table the URLconf is checked against."""
    c = world["conversation"].pk
    return [
        ("api-admin-retrieval", "get", f"/api/v1/admin/retrievals/{world['event']}", None),
        (
            "api-admin-replay",
            "post",
            "/api/v1/admin/replay",
            {"event": world["event"], "ablation": "no_links"},
        ),
        ("api-admin-reindex", "post", "/api/v1/admin/reindex", {"vectors": False}),
        ("api-admin-rebuild", "post", "/api/v1/admin/rebuild", {"conversation": c}),
        ("api-admin-lifecycle", "post", "/api/v1/admin/lifecycle", {"steps": ["expire"]}),
        ("api-admin-metrics", "post", "/api/v1/admin/metrics", {}),
        ("api-admin-metrics", "get", "/api/v1/admin/metrics", None),
        ("api-admin-metrics-history", "get", "/api/v1/admin/metrics/history", None),
        ("api-admin-conversation-export", "get", f"/api/v1/admin/conversations/{c}/export", None),
    ]


def _call(c, method, path, body):
    return getattr(c, method)(path, body, format="json") if body is not None else getattr(c, method)(path)


def test_the_admin_table_covers_every_admin_url_and_method(world):
    in_urlconf = set()
    for pattern in admin_api_patterns:
        view = pattern.callback.view_class
        for method in view.http_method_names:
            if method not in ("options", "head") and hasattr(view, method):
                in_urlconf.add((pattern.name, method))

    assert {(name, method) for name, method, _, _ in _routes(world)} == in_urlconf
    # the admin routes are not the apps' routes (tests/memory/api/test_api_auth.py's ENDPOINTS)
    assert not {p.name for p in api_patterns} & {p.name for p in admin_api_patterns}


def test_an_admin_key_reaches_every_admin_route(admin, world):
    for _, method, path, body in _routes(world):
        response = _call(admin, method, path, body)
        assert response.status_code in (200, 201), (path, response.content)


@pytest.mark.parametrize("who", ["none", "app key", "revoked", "garbage"])
def test_admin_routes_refuse_anything_but_a_live_admin_key(client, world, actor, who):
    if who == "none":
        c = APIClient()
    elif who == "app key":
        c = client
    else:
        key, raw = admin_key_create(actor=actor)
        if who == "revoked":
            admin_key_revoke(key=key, actor=actor)
        else:
            raw = raw[:-3] + "xyz"
        c = APIClient()
        c.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    before = _rows()
    for _, method, path, body in _routes(world):
        response = _call(c, method, path, body)
        assert response.status_code == 401, (path, response.content)
        if who == "app key":
            assert "admin key" in response.json()["error"]["message"]
    assert _rows() == before


def test_an_admin_key_is_refused_on_the_apps_routes(world, admin_raw):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {admin_raw}")

    response = c.post("/api/v1/context", {"subject": "alice", "message": "hi"}, format="json")

    assert response.status_code == 401
    assert "admin key" in response.json()["error"]["message"]


def test_retrieval_event_shows_query_items_tokens_mode_and_policy(admin, world):
    event = RetrievalEvent.objects.get(pk=world["event"])

    data = admin.get(f"/api/v1/admin/retrievals/{event.pk}").json()

    assert data["query"] == "what about it?"
    assert data["rewritten_query"] == event.rewritten_query != data["query"]
    assert data["items"] == event.items and data["items"]
    assert {"score", "reason", "section", "kind"} <= set(data["items"][0])
    assert data["tokens"]["total"] > 0
    assert data["mode"] and data["policy_hash"] and data["subject"] == "alice"
    assert admin.get("/api/v1/admin/retrievals/999999").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"ablation": "no_links"},
        {"event": 1, "conversation": 1, "ablation": "no_links"},
        {"event": "1", "ablation": "no_links"},
        {"event": 1, "ablation": "no_such_preset"},
        {"event": 1, "ablation": "no_links", "extra": True},
        {"event": 1},
    ],
)
def test_replay_input_is_strict(admin, world, body):
    response = admin.post("/api/v1/admin/replay", body, format="json")

    assert response.status_code == 400, response.content


def test_metrics_input_is_strict(admin, world):
    assert admin.post("/api/v1/admin/metrics", {"window_hours": "24"}, format="json").status_code == 400
    assert admin.post("/api/v1/admin/metrics", {"app": 999999}, format="json").status_code == 404
    assert admin.get("/api/v1/admin/metrics/history?limit=0").status_code == 400
    assert admin.get("/api/v1/admin/metrics/history?nope=1").status_code == 400


def test_replay_of_an_event_writes_nothing_and_no_rewrite_changes_the_query(admin, world):
    before = _rows()

    data = admin.post(
        "/api/v1/admin/replay", {"event": world["event"], "ablation": "no_rewrite"}, format="json"
    ).json()

    assert _rows() == before
    (turn,) = data["turns"]
    assert turn["baseline"]["rewritten_query"] != "what about it?"
    assert turn["ablated"]["rewritten_query"] == "what about it?"
    assert turn["diff"]["rewritten_query_changed"] and turn["diff"]["changed"]
    assert data["overrides"] == {"retrieve": {"rewriter": {"enabled": False}}}


def test_replay_of_a_conversation_without_links_drops_the_linked_note(admin, world):
    linked = Note.objects.get(content=LINKED)
    before = _rows()

    data = admin.post(
        "/api/v1/admin/replay",
        {"conversation": world["conversation"].pk, "ablation": "no_links"},
        format="json",
    ).json()

    assert _rows() == before
    assert [t["message"] for t in data["turns"]] == ["we deploy the billing api on fridays", "what about it?"]
    expanded = {i["id"] for t in data["turns"] for i in t["baseline"]["items"] if i["expanded"]}
    assert f"n:{linked.pk}" in expanded
    removed = {r for t in data["turns"] for s in t["diff"]["sections"] for r in s["removed"]}
    assert f"n:{linked.pk}" in removed
    assert not any(i["expanded"] for t in data["turns"] for i in t["ablated"]["items"])


def test_metrics_compute_latest_and_history(admin, world, app):
    first = admin.post("/api/v1/admin/metrics", {"app": app.pk}, format="json").json()
    second = admin.post("/api/v1/admin/metrics", {"app": app.pk, "window_hours": 1}, format="json").json()

    assert first["data"]["counts"]["notes"] == 2
    assert first["data"]["retrievals"]["count"] == 1
    assert first["data"]["retrievals"]["items_per_section"]
    assert first["data"]["retrievals"]["latency_ms"]["p50"] is not None
    assert admin.get(f"/api/v1/admin/metrics?app={app.pk}").json()["id"] == second["id"]
    page = admin.get(f"/api/v1/admin/metrics/history?app={app.pk}&limit=1").json()
    assert [s["id"] for s in page["snapshots"]] == [second["id"]] and page["next_before"] == second["id"]
    rest = admin.get(f"/api/v1/admin/metrics/history?app={app.pk}&before={page['next_before']}").json()
    assert [s["id"] for s in rest["snapshots"]] == [first["id"]] and rest["next_before"] is None
    assert admin.get("/api/v1/admin/metrics").status_code == 404  # nothing for every App yet
    assert MetricSnapshot.objects.count() == 2


def test_export_holds_messages_evidence_runs_and_events(admin, world):
    c = world["conversation"]

    data = admin.get(f"/api/v1/admin/conversations/{c.pk}/export").json()

    assert [m["text"] for m in data["messages"]][0] == "we deploy the billing api on fridays"
    assert len(data["messages"]) == 3
    assert [e["id"] for e in data["retrieval_events"]] == [world["event"]]
    assert "evidence" in data and "reflection_runs" in data
    assert admin.get("/api/v1/admin/conversations/999999/export").status_code == 404


def test_manage_admin_key_create_prints_it_once_and_revoke_refuses_it(capsys, db):
    call_command("admin_key", "create", "ops")
    raw = capsys.readouterr().out.strip().splitlines()[-1]
    key = AdminKey.objects.get()
    assert raw.startswith(f"mwa_{key.prefix}_") and key.key_hash == AdminKey.hash_secret(raw)
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert c.get("/api/v1/admin/metrics/history").status_code == 200

    call_command("admin_key", "revoke", key.prefix)

    assert c.get("/api/v1/admin/metrics/history").status_code == 401
    assert set(AuditEvent.objects.values_list("action", flat=True)) == {
        "admin_key.created",
        "admin_key.revoked",
    }
