"""Whether conflicting statements become the right revision (`manage.py revision_eval`; the set:
tests/data/revisions/{dev,test,heldout2}.json, described in docs/revision-set.md).

Each case is one belief a person holds and one new piece of evidence that bears on it, with
the revision a careful annotator expects (one of the eight `RevisionAction`s, written from their
meanings in memory/beliefs/__init__.py, never from what the engine does) and why:

    {"id", "split",
     "belief":   {"kind": "fact"|"note", "key", "value", "content", "mode", "scope", "said", "at"},
     "evidence": {"text", "key", "value", "content", "mode", "scope", "at"},
     "expected": ACTION, "why"}

A belief's `mode`/`scope` are those of the conversation it was learned in and `said` the
message it was learned from; the evidence's are those of the conversation it is said in and
`text` the message itself; `key`/`value` (a fact) or `content` (a note) are what the reflection
extractor would take from the message (an empty value: the fact ends).

Each case runs in its own subject inside a transaction that is rolled back afterwards, so
nothing stays and no case sees another's memory:
1. a conversation of the belief's mode and scope, the `said` message at the belief's time, and
   the belief stored from it the way reflection stores one (a fact unqualified, `fact_set`; a
   note through `note_store`, which takes the conversation's scope);
2. a conversation of the evidence's mode and scope and the evidence `text` as a message there
   at its time;
3. the revision engine: `belief_revise(subject, claim, message, actor, config)` of
   memory/services/beliefs.py with the evidence's claim (memory.beliefs.detect.Claim).

The action taken is the first BeliefRevision recorded on the case's belief ("NONE" when there
is none: the evidence was stored plainly, or detection missed the conflict). History is intact
when every fact row, note, note version and evidence unit that existed before the evidence
still exists, a fact row's key, value, qualifiers and start are as they were and a note
version's content is unchanged — versions are only ever added. Reported: per-action precision,
recall and F1, accuracy, the confusion matrix and the cases whose history broke.
"""

from memory.beliefs.evaluation.cases import (
    ACTIONS,
    ALL_SPLITS,
    DATA_DIR,
    KINDS,
    LABELS,
    NONE,
    SPLITS,
    case_errors,
    load_cases,
    load_split,
    set_errors,
    split_path,
)
from memory.beliefs.evaluation.history import history_problems, history_snapshot
from memory.beliefs.evaluation.output import format_misses, format_table
from memory.beliefs.evaluation.runner import (
    CaseResult,
    Report,
    Reviser,
    case_run,
    claim_of,
    default_claim_class,
    default_reviser,
    eval_config,
    measure,
)
from memory.beliefs.evaluation.scoring import scores

__all__ = [
    "ACTIONS",
    "ALL_SPLITS",
    "DATA_DIR",
    "KINDS",
    "LABELS",
    "NONE",
    "SPLITS",
    "CaseResult",
    "Report",
    "Reviser",
    "case_errors",
    "case_run",
    "claim_of",
    "default_claim_class",
    "default_reviser",
    "eval_config",
    "format_misses",
    "format_table",
    "history_problems",
    "history_snapshot",
    "load_cases",
    "load_split",
    "measure",
    "scores",
    "set_errors",
    "split_path",
]
