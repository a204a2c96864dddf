"""Evidence → belief → summary (issue 13).

Three layers, each item of memory on exactly one of them (`layer_of`):
- **evidence** — what was said or happened, verbatim, with its citation and time: the
  Evidence units (one per stored turn, memory/services/evidence.py). Append-only: a unit is
  never rewritten, only hidden, archived or forgotten.
- **belief** — a revisable interpretation derived from evidence: a profile fact or a note.
  Versioned (ProfileFact rows, NoteVersion), each with a `confidence` and the evidence it rests
  on (memory/beliefs/read.py `evidence_ids_bulk`: the Evidence units of its source message and
  of every message that revised it). New evidence that bears on a belief revises it (memory/services/beliefs.py,
  one BeliefRevision per revision, with the reason).
- **summary** — beliefs compressed: lessons, procedures, mental models and the session
  summary. Marked as such wherever they render, and never treated as established fact.

The eight revisions (RevisionAction), for a belief B and new evidence E:
- REINFORCE — E says B again: one more confirmation, confidence + `reinforceStep`.
- WEAKEN — E doubts B ("I think", "not sure any more"), or the person flagged it stale:
  confidence − `weakenStep`; under `archiveBelow` the belief is archived instead.
- SUPERSEDE — E corrects B ("actually, it's …"): a new version with E's value; the old one is
  closed and its confidence set to 0 (it was wrong, not merely over).
- SPLIT_BY_TIME — the world changed ("I moved to Berlin"): a new version from E's time; the
  old one keeps its confidence, true until then.
- SPLIT_BY_MODE / SPLIT_BY_SCOPE — both hold, in different assistant modes or projects: E's
  value is written qualified by E's mode (scope), B's value re-qualified by the mode (scope) it
  was learned in when that is known, else left as the default for everywhere else.
- MARK_EXCEPTION — B holds, with E as a named exception ("just this once"): B gains an
  `exceptions` entry, no new version.
- ARCHIVE — B no longer holds and nothing replaces it: closed (a fact) or archived (a note).
"""

from memory.models import Evidence, Lesson, Note, Procedure, ProfileFact

EVIDENCE, BELIEF, SUMMARY = "evidence", "belief", "summary"
LAYERS = (EVIDENCE, BELIEF, SUMMARY)

# item kinds (context items, votes) → layer
KIND_LAYERS = {
    "evidence": EVIDENCE,
    "fact": BELIEF,
    "note": BELIEF,
    "lesson": SUMMARY,
    "procedure": SUMMARY,
    "mental_model": SUMMARY,
    "summary": SUMMARY,
}


def layer_of(item) -> str:
    """The layer of an item: a model instance or an item kind ("fact", "evidence", …)."""
    if isinstance(item, str):
        return KIND_LAYERS[item]
    if isinstance(item, Evidence):
        return EVIDENCE
    if isinstance(item, (ProfileFact, Note)):
        return BELIEF
    if isinstance(item, (Lesson, Procedure)):
        return SUMMARY
    raise TypeError(f"no layer for {type(item).__name__}")


def belief_snapshot(belief) -> dict:
    """What a revision records of a belief before and after (BeliefRevision.before/after)."""
    if isinstance(belief, ProfileFact):
        return {
            "id": belief.pk,
            "key": belief.key,
            "value": belief.value,
            "mode": belief.mode,
            "scope": belief.scope,
            "confidence": round(belief.confidence, 4),
            "confirmations": belief.confirmations,
            "valid_from": belief.valid_from.isoformat() if belief.valid_from else None,
            "valid_to": belief.valid_to.isoformat() if belief.valid_to else None,
            "exceptions": list(belief.exceptions),
        }
    return {
        "id": belief.pk,
        "content": belief.content,
        "mode": belief.mode,
        "scope": belief.scope,
        "confidence": round(belief.confidence, 4),
        "version": belief.version,
        "archived_at": belief.archived_at.isoformat() if belief.archived_at else None,
    }
