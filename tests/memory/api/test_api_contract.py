"""The interaction contract over REST: read per mode, correct, reset; strict bodies; the tenant
wall; and the contract a turn teaches changing the context of the next turn."""

import pytest

from memory.models import AuditEvent, InteractionContract, Subject
from memory.services.contract import contract_set
from tests.factories import SubjectFactory

API = "/api/v1"


def _context(client, conversation, message):
    body = {"subject": "alice", "message": message, "conversation": conversation}
    response = client.post(f"{API}/context", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_contract_changes_the_context_of_the_next_turn(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    conversation = client.post(
        f"{API}/conversations",
        {"subject": "alice", "external_id": "dbg", "mode": "coding_debug"},
        format="json",
    ).json()["id"]
    first = "The deploy script fails with exit code 3. Just give me the command to see the logs, no essay."
    before = _context(client, conversation, first)
    client.post(f"{API}/conversations/{conversation}/messages", {"text": first}, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"{API}/conversations/{conversation}/responses",
            {"text": "journalctl -u deploy -n 50"},
            format="json",
        )
    flushed = client.post(f"{API}/flush", {"subject": "alice", "timeout_ms": 100}, format="json").json()

    after = _context(client, conversation, "now it says permission denied")

    assert flushed["done"] is True
    assert "### contract" not in before["tail"]
    assert "### contract\n- depth: brief — answer first, keep it short" in after["tail"]
    contract = client.get(f"{API}/subjects/alice/contract/coding_debug").json()
    assert contract["dimensions"]["depth"]["value"] == "brief"
    assert contract["dimensions"]["depth"]["evidence"] and contract["dimensions"]["depth"]["shown"] is True
    assert contract["text"] in after["tail"]


def test_a_correction_over_rest_changes_the_next_context_and_wins_over_observation(
    client, subject, actor, config
):
    conversation = client.post(
        f"{API}/conversations",
        {"subject": "alice", "external_id": "r", "mode": "research_deep_dive"},
        format="json",
    ).json()["id"]

    response = client.patch(
        f"{API}/subjects/alice/contract",
        {"mode": "research_deep_dive", "depth": "detailed", "pushback": "welcome", "reason": "I am learning"},
        format="json",
    )
    context = _context(client, conversation, "how do transformers attend")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["mode"] == "research_deep_dive" and body["renders"] is True
    assert body["dimensions"]["depth"] == {
        "value": "detailed",
        "score": 1.0,
        "confidence": 1.0,
        "evidence": [],
        "signals": 0,
        "style_messages": 0,
        "source": "person",
        "reason": "I am learning",
        "updated_at": body["dimensions"]["depth"]["updated_at"],
        "shown": True,
    }
    assert "- depth: detailed — explain the reasoning, with background (set by the person)" in context["tail"]
    assert "- pushback: welcome" in context["tail"]
    assert AuditEvent.objects.filter(action="contract.set", subject=subject).exists()


def test_list_shows_every_mode_learned_and_whether_it_renders(client, subject, actor, config):
    contract_set(subject=subject, mode="brainstorm", values={"pace": "fast"}, actor=actor, config=config)
    contract_set(subject=subject, mode="coding_debug", values={"depth": "brief"}, actor=actor, config=config)

    body = client.get(f"{API}/subjects/alice/contract").json()

    assert [(c["mode"], c["renders"]) for c in body["contracts"]] == [
        ("brainstorm", False),
        ("coding_debug", True),
    ]
    assert body["contracts"][0]["text"] == ""
    assert body["contracts"][1]["text"].startswith("### contract\n- depth: brief")


def test_reading_a_known_mode_with_nothing_learned_is_empty_and_an_unknown_mode_is_404(client, subject):
    empty = client.get(f"{API}/subjects/alice/contract/companion")
    unknown = client.get(f"{API}/subjects/alice/contract/karaoke")

    assert empty.status_code == 200
    assert empty.json() == {
        "mode": "companion",
        "renders": True,
        "observations": 0,
        "dimensions": {},
        "text": "",
        "created_at": None,
        "updated_at": None,
    }
    assert unknown.status_code == 404 and unknown.json()["error"]["field"] == "mode"


def test_the_mode_endpoint_sets_and_resets_one_dimension(client, subject, actor, config):
    contract_set(subject=subject, mode="coding_debug", values={"depth": "brief"}, actor=actor, config=config)

    patched = client.patch(f"{API}/subjects/alice/contract/coding_debug", {"pace": "slow"}, format="json")
    reset = client.delete(f"{API}/subjects/alice/contract/coding_debug?dimension=depth")

    assert patched.status_code == 200 and set(patched.json()["dimensions"]) == {"depth", "pace"}
    assert reset.status_code == 204
    assert set(InteractionContract.objects.get(subject=subject).dimensions) == {"pace"}


def test_delete_forgets_every_modes_contract(client, subject, actor, config):
    contract_set(subject=subject, mode="coding_debug", values={"depth": "brief"}, actor=actor, config=config)
    contract_set(subject=subject, mode="companion", values={"pace": "slow"}, actor=actor, config=config)

    response = client.delete(f"{API}/subjects/alice/contract")

    assert response.status_code == 204
    assert not InteractionContract.objects.filter(subject=subject).exists()
    assert AuditEvent.objects.filter(action="contract.reset", subject=subject).count() == 1


@pytest.mark.parametrize(
    "body,field",
    [
        ({"mode": "karaoke", "depth": "brief"}, "mode"),
        ({"mode": 3, "depth": "brief"}, "mode"),
        ({"depth": "brief"}, "mode"),
        ({"mode": "coding_debug", "depth": "tiny"}, "depth"),
        ({"mode": "coding_debug", "depth": 1}, "depth"),
        ({"mode": "coding_debug", "pace": None}, "pace"),
        ({"mode": "coding_debug"}, "depth"),
        ({"mode": "coding_debug", "reason": "why not"}, "depth"),
        ({"mode": "coding_debug", "depth": "brief", "reason": 7}, "reason"),
        ({"mode": "coding_debug", "depth": "brief", "tone": "warm"}, "tone"),
    ],
)
def test_a_bad_body_is_a_400_naming_the_field_and_writes_nothing(client, db, app, body, field):
    response = client.patch(f"{API}/subjects/newcomer/contract", body, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == field
    assert not Subject.objects.filter(external_id="newcomer").exists()  # nothing half-written
    assert not InteractionContract.objects.exists()


def test_a_bad_dimension_to_reset_is_a_400_naming_it(client, subject):
    response = client.delete(f"{API}/subjects/alice/contract/coding_debug?dimension=tone")

    assert response.status_code == 400 and response.json()["error"]["field"] == "dimension"


# --- the tenant wall ---------------------------------------------------------------------------
@pytest.fixture
def learned(subject, actor, config):
    return contract_set(
        subject=subject, mode="coding_debug", values={"depth": "brief"}, actor=actor, config=config
    )


@pytest.mark.parametrize(
    "method,path,body",
    [
        ("get", "/subjects/alice/contract", None),
        ("get", "/subjects/alice/contract/coding_debug", None),
        ("patch", "/subjects/alice/contract/coding_debug", {"depth": "detailed"}),
        ("delete", "/subjects/alice/contract/coding_debug", None),
        ("delete", "/subjects/alice/contract", None),
    ],
)
def test_another_app_without_alice_gets_404_and_changes_nothing(other_client, learned, method, path, body):
    send = getattr(other_client, method)

    response = send(API + path, body, format="json") if body else send(API + path)

    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert InteractionContract.objects.get().dimensions == learned.dimensions


def test_another_apps_own_alice_has_her_own_contract(other_client, other_app, learned):
    SubjectFactory(app=other_app, external_id="alice")

    read = other_client.get(f"{API}/subjects/alice/contract/coding_debug").json()
    other_client.patch(
        f"{API}/subjects/alice/contract", {"mode": "coding_debug", "depth": "detailed"}, format="json"
    )
    other_client.delete(f"{API}/subjects/alice/contract")

    assert read["dimensions"] == {}
    assert InteractionContract.objects.get(pk=learned.pk).dimensions["depth"]["value"] == "brief"


def test_setting_a_contract_for_a_new_subject_creates_it_in_the_callers_app_only(
    other_client, other_app, learned
):
    response = other_client.patch(
        f"{API}/subjects/alice/contract", {"mode": "coding_debug", "pace": "fast"}, format="json"
    )

    assert response.status_code == 200
    theirs = InteractionContract.objects.get(subject__app=other_app)
    assert set(theirs.dimensions) == {"pace"} and theirs.pk != learned.pk
    assert set(InteractionContract.objects.get(pk=learned.pk).dimensions) == {"depth"}
