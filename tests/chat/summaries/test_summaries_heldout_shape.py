"""The held-out session-summary set (tests/data/session_summaries/heldout_sessions.json) is shaped
as the scorer reads it. Only its shape is checked here: the set stays untouched by any score
until the lead measures it once (`manage.py summaries_eval --data ...`)."""

from pathlib import Path

from chat.summaries.evaluation import (
    DEFAULT_DATA,
    KINDS,
    app_config,
    captured_in,
    distractor_in,
    load_set,
    set_load,
    set_scopes,
    steps_in,
)
from memory.documents import project_of
from memory.models import Conversation, Message
from memory.services import app_create

HELDOUT = Path(DEFAULT_DATA).with_name("heldout_sessions.json")


def _items(data):
    return [i for c in data["conversations"] for i in c["expected"]] + [
        i for p in data["projects"] for i in p["expected"]
    ]


def _distractors(data):
    return [d for c in data["conversations"] for d in c.get("distractors", [])] + [
        d for p in data["projects"] for d in p.get("distractors", [])
    ]


def test_the_heldout_set_has_conversations_of_three_projects_and_personal_ones():
    data = load_set(HELDOUT)
    conversations = data["conversations"]
    assert len(conversations) >= 8
    assert all(8 <= len(c["messages"]) <= 25 for c in conversations)
    assert len([s for s in set_scopes(data) if s]) == 3
    assert "" in set_scopes(data)
    # one project known by its scope alone, one by its working directory alone
    assert any(c["scope"] and not c["working_dir"] for c in conversations)
    assert any(c["working_dir"] and not c["scope"] for c in conversations)
    ids = [c["id"] for c in conversations]
    assert len(ids) == len(set(ids))


def test_every_heldout_item_is_captured_by_its_own_sentence():
    items = _items(load_set(HELDOUT))
    assert 60 <= len(items) <= 80
    assert {i["kind"] for i in items} == set(KINDS)
    assert all(2 <= len(i["keywords"]) <= 4 for i in items)
    assert [i["id"] for i in items if not captured_in(i["text"], i["keywords"])] == []
    assert [i["id"] for i in items if i.get("steps") and not steps_in(i["text"], i["steps"])] == []
    ids = [i["id"] for i in items]
    assert len(ids) == len(set(ids))


def test_every_heldout_item_and_distractor_carries_the_scope_of_its_conversation():
    data = load_set(HELDOUT)
    for case in data["conversations"]:
        scope = project_of(case.get("scope", ""), case.get("working_dir", ""))
        assert {i["scope"] for i in case["expected"] + case.get("distractors", [])} <= {scope}
    assert {p["scope"] for p in data["projects"]} <= set(set_scopes(data))


def test_the_heldout_recurring_workflows_name_their_conversations_and_steps():
    data = load_set(HELDOUT)
    by_id = {c["id"]: c for c in data["conversations"]}
    recurring = [i for i in _items(data) if i["kind"] == "workflow" and len(i.get("conversations", [])) >= 2]
    assert len(recurring) >= 3 and all(i["steps"] for i in recurring)
    for workflow in recurring:
        scopes = {project_of(by_id[c]["scope"], by_id[c]["working_dir"]) for c in workflow["conversations"]}
        assert scopes == {workflow["scope"]}


def test_heldout_distractors_are_set_aside_by_their_own_sentence():
    distractors = _distractors(load_set(HELDOUT))
    assert len(distractors) >= 10
    assert all(d["keywords"] and d.get("unless") for d in distractors)
    # each distractor's text names it as rejected or replaced, so it must not count as present
    assert [d["text"] for d in distractors if distractor_in(d["text"], d)] == []


def test_heldout_items_that_stay_true_do_not_present_a_distractor_of_their_scope():
    data = load_set(HELDOUT)
    distractors = _distractors(data)
    presenting = [
        (i["id"], d["text"])
        for i in _items(data)
        if i.get("final", True)
        for d in distractors
        if d["scope"] == i["scope"] and distractor_in(i["text"], d)
    ]
    assert presenting == []


def test_every_heldout_secret_is_in_a_message_and_in_no_label():
    data = load_set(HELDOUT)
    assert 2 <= len(data["secrets"]) <= 3
    messages = " ".join(m["text"] for c in data["conversations"] for m in c["messages"])
    labels = " ".join(i["text"] for i in _items(data)) + " ".join(d["text"] for d in _distractors(data))
    assert all(secret in messages for secret in data["secrets"])
    assert [s for s in data["secrets"] if s in labels] == []


def test_the_heldout_set_loads_as_one_subject_with_its_scopes_and_times(db, actor):
    data = load_set(HELDOUT)
    app = app_create(name="summaries-heldout-load", config=app_config(), actor=actor)
    subject = set_load(data, app=app, actor=actor)
    conversations = Conversation.objects.filter(subject=subject)
    assert conversations.count() == len(data["conversations"])
    assert Message.objects.filter(conversation__subject=subject).count() == sum(
        len(c["messages"]) for c in data["conversations"]
    )
    for case in data["conversations"]:
        stored = conversations.get(external_id=case["id"])
        assert (stored.scope, stored.working_dir) == (case["scope"], case["working_dir"])
        times = list(
            Message.objects.filter(conversation=stored)
            .order_by("occurred_at")
            .values_list("occurred_at", flat=True)
        )
        assert times[0].isoformat() == case["messages"][0]["at"]
        assert times == sorted(times)
