"""Whether the context builder picks what applies (`manage.py applicability_eval`; the set:
tests/data/applicability/labelled.json, described in docs/applicability-set.md).

The set is a few personas — profile facts, notes, turns kept as evidence units, consent
policies and the person's decisions on pending memories, each item with a persona-local
`label` — and questions asked of them in a
conversation of some mode and scope, each saying what must and must not render. The expectations
are written from the mode manifests (memory/modes/builtin/*.json), never from what the builder
does:

- an item qualified by `mode` renders only in that mode;
- an item scoped to a project renders where the mode's `scopes` reach ("same", "unscoped",
  "other" — `Mode.scope_allowed`);
- an item of a consent category renders only in a mode whose privacy ceiling allows the
  category (`Mode.category_allowed`), and only while the person consents: a denied, rejected or
  still-pending item never renders, nor one whose category was denied after it was stored;
- of a fact set again under the same key (and mode and scope), only the newest value renders.

Each persona is built into a fresh subject of a new App through the services a client or
reflection would use (`fact_set`, `note_store`, `consent_policy_set`, `memory_candidate_route`
and the pending decisions, `conversation_get_or_create`, `message_add`, `evidence_record`);
every categorised item passes the consent gate. Each question gets its own conversation (so no earlier turn, cached
build or delivered block colours it) and one `context_build` in that conversation's mode.

A question passes when every check holds:

- `must_include`: each label's item is among the context's items;
- `must_exclude`: no label's item is among them, and its text (a fact's value, a note's or a
  turn's first NOTE_MARK characters) is nowhere in the tail — so a dropped or superseded
  value that has no row to point at is caught too;
- `abstain`: no fact, note or evidence item renders at all, except the labels in `allowed`
  (pinned identity facts, a preference qualified to this very mode);
- `exact`: each string is in the tail verbatim.
"""

from memory.applicability_eval.labelled import CATEGORIES, DEFAULT_DATA, label_statuses, load_set, set_errors
from memory.applicability_eval.loader import Label, LoadedPersona, eval_config, persona_load
from memory.applicability_eval.scoring import (
    QuestionResult,
    Report,
    format_failures,
    format_table,
    measure,
    question_check,
    tail_of,
)

__all__ = [
    "CATEGORIES",
    "DEFAULT_DATA",
    "Label",
    "LoadedPersona",
    "QuestionResult",
    "Report",
    "eval_config",
    "format_failures",
    "format_table",
    "label_statuses",
    "load_set",
    "measure",
    "persona_load",
    "question_check",
    "set_errors",
    "tail_of",
]
