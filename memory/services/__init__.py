"""Every write to the memory app goes through these functions (STYLE.md: services)."""

from memory.services.apps import (
    api_key_create,
    api_key_revoke,
    app_config_set,
    app_create,
    subject_delete,
    subject_get_or_create,
)
from memory.services.audit import Actor, audit_record
from memory.services.facts import fact_remove, fact_set
from memory.services.notes import (
    note_edit,
    note_forget,
    note_store,
    note_store_and_embed,
    notes_evict_overflow,
    notes_mark_recalled,
)
from memory.services.parking import item_park
from memory.services.retrieval import context_deliveries_update, retrieval_event_record
from memory.services.votes import person_vote, vote_cast

__all__ = [
    "Actor",
    "api_key_create",
    "api_key_revoke",
    "app_config_set",
    "app_create",
    "audit_record",
    "context_deliveries_update",
    "fact_remove",
    "fact_set",
    "item_park",
    "note_edit",
    "note_forget",
    "note_store",
    "note_store_and_embed",
    "notes_evict_overflow",
    "notes_mark_recalled",
    "retrieval_event_record",
    "subject_delete",
    "subject_get_or_create",
    "person_vote",
    "vote_cast",
]
