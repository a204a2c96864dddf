"""Reflection on a conversation turn: what to remember from it (DESIGN §4, hot write)."""

from chat.reflection.heuristics import extract
from chat.reflection.ops import LIST_KEYS, Extraction, FactOp, FactRetraction, NoteOp
from memory.categories import CATEGORY_PRIORITY, classify_category

__all__ = [
    "CATEGORY_PRIORITY",
    "LIST_KEYS",
    "Extraction",
    "FactOp",
    "FactRetraction",
    "NoteOp",
    "classify_category",
    "extract",
]
