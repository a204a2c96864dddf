"""Phase 1: one conversation → its Extraction (chat.summaries.blocks).

TO BE WRITTEN (helper "extract"): the heuristic path and the LLM path."""

from chat.summaries.blocks import Extraction


def session_extract(*, conversation, messages, notes, config) -> Extraction:
    """The conversation's raw memory (sections of blocks.SECTIONS), title and synopsis."""
    raise NotImplementedError
