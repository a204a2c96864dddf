"""A subject holding one of every kind the export carries, for the round-trip and delete tests."""

from types import SimpleNamespace

from memory.models import LinkKind, NoteLink
from memory.services import fact_set, note_edit, note_store, vote_cast
from memory.services.consent import consent_policy_set, memory_candidate_route
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.distillation import lesson_distilled_store
from memory.services.evidence import evidence_record
from memory.services.lessons import lesson_edit, procedure_edit

MARKER = "zqxmarker"  # in every text the subject holds, so a scan can find what is left


def portable_world(subject, actor, config) -> SimpleNamespace:
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id="trip", scope="travel", actor=actor
    )
    asked, _ = message_add(
        conversation=conversation,
        role="user",
        name="Alice",
        text=f"I am flying to Lisbon in March {MARKER}",
        actor=actor,
    )
    answered, _ = message_add(
        conversation=conversation,
        role="assistant",
        text=f"Noted: Lisbon in March. Book Taberna do Mar {MARKER}",
        actor=actor,
    )
    evidence_record(message=asked, category="", actor=actor, config=config)
    evidence_record(message=answered, category="", actor=actor, config=config)

    fact_set(subject=subject, key="city", value=f"Porto {MARKER}", actor=actor)
    fact_set(subject=subject, key="city", value=f"Lisbon {MARKER}", actor=actor)  # history: Porto closed
    fact_set(subject=subject, key="name", value=f"Alice {MARKER}", actor=actor)
    fact_set(
        subject=subject,
        key="allergy",
        value=f"peanuts {MARKER}",
        pinned=False,
        keywords=["restaurant", "dinner"],
        actor=actor,
    )

    restaurant, _ = note_store(
        subject=subject,
        content=f"Alice's favourite restaurant is Taberna do Mar in Lisbon {MARKER}",
        tags=["food"],
        conversation=conversation,
        source_message=asked,
        actor=actor,
        config=config,
    )
    note_edit(
        note=restaurant,
        content=f"Alice's favourite restaurant is Taberna do Mar in Lisbon's Alfama {MARKER}",
        actor=actor,
        config=config,
    )
    cat, _ = note_store(
        subject=subject,
        content=f"Alice's cat Miso hates the vacuum cleaner {MARKER}",
        actor=actor,
        config=config,
    )
    flight, _ = note_store(
        subject=subject,
        content=f"Lisbon trip: Alice booked the flight for March 3rd {MARKER}",
        conversation=conversation,
        source_message=answered,
        actor=actor,
        config=config,
    )
    NoteLink.objects.create(src=restaurant, dst=flight, kind=LinkKind.SAME_TOPIC, weight=0.8)
    deploy_notes = [
        note_store(subject=subject, content=text, actor=actor, config=config)[0]
        for text in (
            f"Deploys broke twice when the database migration ran after the app restart {MARKER}",
            f"Run the migration before restarting the app when deploying {MARKER}",
        )
    ]
    lesson = lesson_distilled_store(
        subject=subject,
        note_ids=[n.pk for n in deploy_notes],
        text=f"Run database migrations before restarting the app on deploy {MARKER}",
        tags=["deploy"],
        procedure=(f"Deploy the app {MARKER}", ["Run the migrations.", f"Restart the app {MARKER}."]),
        distiller="heuristic",
        actor=actor,
    )
    assert lesson is not None
    lesson_edit(
        lesson=lesson, text=f"Always run database migrations before the app restarts {MARKER}", actor=actor
    )
    procedure = lesson.procedures.get()
    procedure_edit(
        procedure=procedure,
        steps=["Run the migrations.", "Check them.", f"Restart the app {MARKER}."],
        actor=actor,
    )
    vote_cast(subject=subject, item_kind="note", item_id=cat.pk, signal="up", actor=actor, config=config)
    vote_cast(
        subject=subject, item_kind="lesson", item_id=lesson.pk, signal="useful", actor=actor, config=config
    )

    consent_policy_set(subject=subject, category="health", policy="ask", actor=actor)
    pending = memory_candidate_route(
        subject=subject,
        kind="fact",
        payload={"key": "condition", "value": f"asthma {MARKER}"},
        category="health",
        source_message=asked,
        actor=actor,
        config=config,
    ).obj
    return SimpleNamespace(
        conversation=conversation,
        messages=[asked, answered],
        notes=[restaurant, cat, flight, *deploy_notes],
        lesson=lesson,
        procedure=procedure,
        pending=pending,
    )
