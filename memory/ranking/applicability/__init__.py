"""Selection by applicability (issue 12): which of the ranked candidates a mode's context
shows, and in which order. Similarity generates the candidates (the other modules of
memory/ranking/); this module decides.

**Policy, before scoring** (`policy_allows`), for every kind the builder places: an item
qualified with a mode (`ProfileFact.mode`, `Note.mode`) renders only in that mode; an item's
scope must be within reach (`Mode.scope_allowed(item, conversation)`; without a conversation
no scope is out of reach); an item of a consent category above the mode's privacy ceiling
(`Mode.category_allowed`) never renders, approved or not. Superseded or expired facts, archived
notes and hidden evidence never reach this point (the rankers read active rows only).

**Score** of each candidate, every part in [0, 1] (weights `applicability.weights.*`, a mode's
`retrieval.weights` overriding them):

    final = w_a·applicability + w_r·retrieval + w_v·vitality + w_c·confirmation
            − privacy_penalty − contradiction_penalty − intrusive_penalty

- `retrieval` = the ranker's score ÷ the best score of its list (facts, notes and evidence,
  lessons, procedures are ranked separately).
- knobs: a mode's `applicability` knobs are centred on the balanced 0.5: `k' = 2·(knob − 0.5)`
  in [−1, 1], so a knob at 0.5 (general_qa, the default) changes nothing.
- `task_fit` = r^e × overlap^x, with a = `association`, e = 2·(1 − a) (how steeply the
  retrieval rank counts: a = 1 makes every candidate fit, a = 0.5 leaves r as it is), x =
  2·max(0, 1 − 2a) (how much of the message the item must cover: nothing from the balanced
  0.5 up, so there task_fit = r and general_qa's order is the ranker's), r = retrieval ÷
  (1 + rank/10) (rank 0-based in its list; a pinned fact, not retrieved for this message, has
  r = 0.5), overlap = the share of the message's terms that the item holds (a term matches a
  word of the item when their crude stems agree: memory.text.stem).
- `mode_fit` = clamp(0.25 + 0.5·p + 0.25·(k'_personalization·[fact] +
  k'_emotionalSensitivity·[emotional] + k'_evidenceFirst·[first-hand])), p = 1 − i/n for a kind
  at index i of the n `preferredKinds`, 0 for a kind they leave out, 0.5 when they are empty
  (a kind listed nowhere is weighed, not excluded). emotional: feelings, relationships or
  wellbeing words, or a health/relationships/sexual_life category; first-hand: a user turn
  (evidence), a fact the person confirmed, a note said more than once.
- `temporal` = 1, except an item about a plan (memory.temporal.sentence_tense "future") whose
  dates are all past, or that has no date and is older than 30 days: 1 − 0.4·max(0,
  −k'_uncertaintyTolerance) (a past plan is less valid than a current state, in a mode less
  tolerant of uncertainty than the balanced default).
- `epistemic` = t + (1 − t)·q, t = `uncertaintyTolerance`, q = clamp(confidence (facts; 1
  otherwise) × origin trust (api and dashboard 1.0, import 0.9, task 0.85, reflection 0.75) +
  0.1·min(confirmations, 2)).
- `risk` = 1 when the message is about a risk topic (food, medicine) and the item holds that
  topic's risk words (an allergy, a diet, a medication, a condition); else 0.
- `applicability` = temporal × epistemic × max(0.7·task_fit + 0.3·mode_fit, risk).
- `vitality` = 0.5·0.5^(age / `scoring.recencyHalfLifeDays`) + 0.25·(1 − 0.5^(recall_count/3))
  + 0.25·clamp(0.5 + 0.5·vote_score / `voting.maxVotePerItem`).
- `confirmation` = clamp(0.7·min(confirmations, 3)/3 + 0.3·max(vote_score, 0) / maxVote).
- `privacy_penalty` = `applicability.privacyPenalty` × max(0, 0.5 − personalization) for an
  item of a (allowed) consent category.
- `contradiction_penalty` = `applicability.contradictionPenalty` for a note contradicted by a
  newer one: a `contradicts` link to a later note, or an active fact set after it whose value
  the note negates (the note holds the value's words and a negation).
- `intrusive_penalty` = `feedback.intrusivePenalty` × min(n, `voting.maxVotePerItem`), n = the
  "intrusive" signals (VoteEvent) the item got in this build's mode — one query for all the
  candidates of a build; a signal given in another mode, or without one, does not count here
  (docs/feedback.md).

Items whose applicability is under `applicability.minApplicability` are not placed (in the
default mode pinned facts always are); a section places its items by `final`, skipping one whose
word Jaccard with an item it already holds reaches `applicability.diversityThreshold`.

**LLM judge** (`llm.applicability`): one batched call per build over the best
`applicability.llmMaxCandidates` candidates (prompt `applicability`), on a worker thread bounded
by `applicability.timeoutMs`; the sub-scores it returns replace the heuristic's for the items it
answers; a timeout, an error or an unusable answer (whole or per item) keeps the heuristic's,
counted (`llm.fallback.applicability.*`) and logged.
"""

from memory.ranking.applicability.candidate import (
    Candidate,
    candidates_of,
    item_text,
    note_scopes,
    policy_allows,
)
from memory.ranking.applicability.score import Diversity, breakdown, judge, selected

__all__ = [
    "Candidate",
    "Diversity",
    "breakdown",
    "candidates_of",
    "item_text",
    "judge",
    "note_scopes",
    "policy_allows",
    "selected",
]
