"""What mirror retrieval (memory/context.py Mirror) costs the database: one small statement
finds which placed beliefs are doubtful or contested, and the evidence is asked for those only —
never a CASE of EXISTS subqueries for every placed belief, which cost three quarters of a
build's CPU time."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.context import context_build
from memory.models import Evidence, Note, RevisionAction
from memory.services import note_store
from memory.services.beliefs import revision_apply
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record

BAKERIES = [
    "Alice's favourite bakery is the one by the river",
    "Alice buys rye bread at the bakery on Main Street",
    "The bakery near the station sells Alice's croissants",
    "Alice thinks the bakery by the park is too dear",
]


@pytest.fixture
def notes(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    made = []
    for text in BAKERIES:
        message, _ = message_add(conversation=conversation, role="user", text=text, actor=actor)
        evidence_record(message=message, category="", actor=actor, config=config)
        note, _ = note_store(
            subject=subject, content=text, source_message=message, actor=actor, config=config
        )
        made.append((note, message))
    Note.objects.filter(pk__in=[n.pk for n, _ in made]).update(confidence=0.95)
    return made


def _evidence_case_statements(captured) -> list[str]:
    table = Evidence._meta.db_table
    return [
        q["sql"]
        for q in captured.captured_queries
        if f'FROM "{table}"' in q["sql"] and "CASE WHEN" in q["sql"]
    ]


def _build(subject, config):
    with CaptureQueriesContext(connection) as captured:
        context = context_build(subject=subject, message="which bakery?", config=config, record=False)
    return context, captured


def test_confident_uncontested_beliefs_cost_no_evidence_query(subject, config, notes):
    context, captured = _build(subject, config)

    assert sum(1 for i in context.items if i.kind == "note") >= 3  # several beliefs placed
    assert not any(i.mirror_of for i in context.items)
    assert _evidence_case_statements(captured) == []


def test_only_the_contested_belief_is_asked_for_its_evidence(subject, actor, config, notes):
    (weakened, _), *_ = notes
    doubt, _ = message_add(
        conversation=weakened.source_message.conversation, role="user", text="not sure any more", actor=actor
    )
    revision_apply(
        subject=subject,
        belief=weakened,
        action=RevisionAction.WEAKEN,
        reason="the person doubts it",
        message=doubt,
        actor=actor,
        config=config,
    )

    context, captured = _build(subject, config)

    assert {i.mirror_of for i in context.items if i.mirror_of} == {f"n:{weakened.pk}"}
    (statement,) = _evidence_case_statements(captured)
    # one belief in the CASE, not every placed one
    assert set(re.findall(r"THEN '([nf]:[0-9]+)'", statement)) == {f"n:{weakened.pk}"}
