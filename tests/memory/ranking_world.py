"""Turns and the ranking over them, for the tests of `memory.ranking.rank_notes`."""

import datetime

from memory.ranking import rank_notes
from memory.search.lexical import NoteFilter
from memory.services import note_store
from memory.services.conversations import conversation_get_or_create, message_add
from memory.text import query_terms

NOW = datetime.datetime(2024, 3, 1, 12, 0, tzinfo=datetime.UTC)


def rank(subject, config, query, mode=None):
    """`rank_notes` for `query` as the context build calls it, at NOW."""
    return rank_notes(
        subject_id=subject.pk,
        query=query,
        terms=query_terms(query),
        filters=NoteFilter(),
        config=config,
        now=NOW,
        mode=mode,
    )


def session(subject, actor, config, name, turns, when=NOW):
    """One conversation of turns, each a message and a note (as a chat app's turns would be)."""
    conversation, _ = conversation_get_or_create(subject=subject, external_id=name, actor=actor)
    notes = []
    for text in turns:
        message, _ = message_add(
            conversation=conversation, role="user", text=text, occurred_at=when, actor=actor
        )
        note, _ = note_store(
            subject=subject,
            content=text,
            conversation=conversation,
            source_message=message,
            occurred_at=when,
            actor=actor,
            config=config,
        )
        notes.append(note)
    return notes
