"""The heuristic extractor: rule-based reflection on one message, no LLM.

Scheme (what the rules write):

* Identity facts, pinned: ``name``, ``preferred_name``, ``pronouns``, ``location``, ``employer``,
  ``job_title``, ``languages``, ``partner`` (category relationships), ``children`` (category minors).
* Contextual facts with keywords: ``hometown``, ``birthplace``, ``address`` (precise_location), ``school``,
  ``languages.learning``, ``programming_languages``, ``os``, ``editor``, ``tools``, ``allergies``,
  ``health_conditions``, ``medications`` (health), ``diet``, ``religion``, ``politics``, ``income``
  (finances), ``email``, ``phone``, ``birthday``, ``pets``.
* Preferences: ``preference.<topic>`` = ``likes`` | ``dislikes`` ("I hate cilantro" →
  ``preference.cilantro = dislikes``), keywords from the topic and its domain (food → eat,
  restaurant …); ``favorite.<topic>`` = the favourite ("my favourite band is Radiohead").
* List-valued keys (ops.LIST_KEYS) hold comma-separated items; the writer unions them.
* Notes, the first tag is the kind: ``remembered`` ("remember that …"), ``decision`` ("we decided
  …", and any commitment of a group or promise: "we'll move payroll to a new provider in Q4", "next
  quarter we …", "I agreed to …"), ``plan`` (a person's own intention, "I'm going to …", "I plan
  to …", or a dated future sentence) and ``event`` (a dated past sentence; every date resolved
  against the message time), ``people`` (about
  someone in the speaker's life); then topic tags (travel, work, health, family …).
* Retractions: "I don't live in Paris anymore" → FactRetraction("location", "Paris").

What does not become a fact: questions, conditionals ("if I lived in London"), hedged sentences
("I might move to Berlin": a plan note at most), negated statements, statements about other
people, and everything an assistant says except a restated agreement (a decision note).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from chat.reflection import identity, personal
from chat.reflection.capture import make_fact
from chat.reflection.changes import changes, without_retracted
from chat.reflection.identity import Context, Found
from chat.reflection.lexicon import PET_KIND
from chat.reflection.notes import (
    commitment_note,
    dated_clauses,
    dated_note,
    decision_note,
    people_note,
    remembered_body,
    remembered_note,
    reminder_note,
)
from chat.reflection.ops import LIST_KEYS, Extraction, FactOp, FactRetraction
from chat.reflection.text import (
    Sentence,
    before_hedge,
    is_all_lowercase,
    is_ironic,
    is_sarcastic,
    normalise,
    read_sentence,
)
from memory.categories import classify_category, with_source_categories
from memory.temporal import Tense, sentence_tense
from memory.text import split_sentences

__all__ = ["classify_category", "extract"]

_RULES = (*identity.RULES, *personal.RULES)
_ABOUT_PEOPLE = {"partner", "children", "pets"}


def _facts(s: Sentence, ctx: Context) -> list[Found]:
    return [found for rule in _RULES for found in rule(s, ctx)]


def _rules_with(ctx: Context, s: Sentence) -> list[Found]:
    return _facts(s, ctx)


# "if money were no object I'd retire, but I do work at Lidl": the condition ends where a
# "but" turns to what is so; the rest is read as a sentence of its own
_BUT_IN_FACT = re.compile(r",\s*but\s+(?=(?:I|I'm|I've|I'd|we|we're|my|our)\b)", re.IGNORECASE)


def _past_the_condition(sentence: str) -> list[str]:
    if not read_sentence(sentence).conditional or not (m := _BUT_IN_FACT.search(sentence)):
        return [sentence]
    return [sentence[: m.start()], sentence[m.end() :]]


def _is_greeting(raw: str) -> bool:
    return read_sentence(raw).greeted and len(raw.split()) <= 2


@dataclass
class Carry:
    """What reading the earlier parts of one long message established, for reading the next
    part (chat.reflection.accumulator): how the whole message is written, the story's tense,
    and whether its opening sentence (where a bare "I'm Sam" introduces) was read already."""

    all_lower: bool
    sarcastic: bool
    story: Tense = None
    opened: bool = False

    @classmethod
    def of(cls, message: str) -> Carry:
        text = normalise(message)
        return cls(all_lower=is_all_lowercase(text), sarcastic=is_sarcastic(text))


def extract(
    text: str,
    *,
    role: str = "user",
    occurred_at: datetime,
    speaker: str | None = None,
    carry: Carry | None = None,
) -> Extraction:
    """Facts, notes and retractions one message supports. Pure: same input, same output.

    `occurred_at` is the message's own time; relative dates are resolved against it.
    `speaker` (e.g. a LoCoMo speaker name) prefixes note contents so they say who.
    `carry`, when `text` is one part of a longer message, is what the earlier parts
    established; it is updated for the next part.
    """
    result = Extraction()
    text = normalise(text)
    if not text:
        return result
    sentences = [
        clause
        for sentence in split_sentences(text)
        for part in _past_the_condition(sentence)
        for clause in dated_clauses(part, occurred_at)
    ]
    all_lower = carry.all_lower if carry else is_all_lowercase(text)
    sarcastic = carry.sarcastic if carry else is_sarcastic(text)
    # the tense of the last sentence that had one: a story keeps its tense
    story: Tense = carry.story if carry else None
    opened = bool(carry and carry.opened)
    if carry:
        carry.opened = True
    for index, raw in enumerate(sentences):
        s = read_sentence(raw, sarcastic=sarcastic)
        # the sentence's own tense (read on its repaired text, subject restored), else the story's
        own = sentence_tense(s.text)
        s = replace(s, tense_hint=own or story)
        story = own or story
        if role != "user":
            if note := decision_note(s, occurred_at, speaker, assistant=True):
                result.notes.append(note)
            continue
        if carry:
            carry.story = story
        greeted = (index == 0 and not opened) or s.greeted or _is_greeting(sentences[index - 1])
        body = remembered_body(raw)
        if body is not None:
            facts = [
                f
                for f in _facts(read_sentence(body), Context(all_lower, greeted, 1.0))
                if isinstance(f, FactOp)
            ]
            if facts:
                result.facts += facts
            else:
                result.notes.append(remembered_note(body, occurred_at, speaker))
            continue
        if note := reminder_note(s, occurred_at, speaker):
            result.notes.append(note)
            continue
        if s.question or s.conditional or not s.text:
            continue
        ctx = Context(all_lower, greeted, 0.6 if s.unsure else 0.9)
        # "sure, I'm a proper gardener, killed another cactus": a claim made to scoff at gives no fact
        if is_ironic(raw):
            found = []
        elif not s.hedged:
            found = _facts(s, ctx)
        elif plain := before_hedge(s):  # a hedge covers what follows its cue, not the clause before it
            found = [f for f in _facts(read_sentence(plain), ctx) if isinstance(f, FactOp)]
        else:
            found = []
        retracted, replaced = ([], []) if s.hedged else changes(s, text, partial(_rules_with, ctx))
        retracted = _unique_retractions([*(f for f in found if isinstance(f, FactRetraction)), *retracted])
        result.facts += without_retracted([f for f in found if isinstance(f, FactOp)] + replaced, retracted)
        result.retractions += retracted
        about_people = any(isinstance(f, FactOp) and f.key in _ABOUT_PEOPLE for f in found)
        note = (
            decision_note(s, occurred_at, speaker)
            or commitment_note(s, occurred_at, speaker)
            or dated_note(s, occurred_at, speaker, text)
            or (None if about_people else people_note(s, occurred_at, speaker))
        )
        if note:
            result.notes.append(note)
    result.facts = _merge(result.facts)
    return with_source_categories(result, text)


def _unique_retractions(items: list[FactRetraction]) -> list[FactRetraction]:
    seen: dict[tuple[str, str], FactRetraction] = {}
    for item in items:
        seen.setdefault((item.key, item.value.lower()), item)
    return list(seen.values())


_COUNTED = {"children", "pets"}
_COUNT = re.compile(r"^\d+(?:\s+\w+)?$")


def _merge(facts: list[FactOp]) -> list[FactOp]:
    """One op per key: the last statement wins ("I work at Microsoft. Actually, at GitHub"),
    list keys collect their items."""
    merged: dict[str, FactOp] = {}
    for fact in facts:
        previous = merged.pop(fact.key, None)
        items = [*(previous.value.split(", ") if previous else []), *fact.value.split(", ")]
        if fact.key in LIST_KEYS and (previous or len(items) > 1):
            unique: dict[str, str] = {}
            for item in items:
                # one pet read twice ("a puppy …, a beagle called Toast"): its first reading stays
                unique.setdefault((item.split(" (")[0] if fact.key == "pets" else item).lower(), item)
            values = list(unique.values())
            if fact.key in _COUNTED and any(not _COUNT.match(v) for v in values):
                # "two kids, Mila and Oskar": once they are named, the count says nothing more
                values = [v for v in values if not _COUNT.match(v)]
            if fact.key == "pets":
                # "adopted a kitten … named her Pickle": the named pet is that kitten
                named = {v.rsplit(" (", 1)[1].rstrip(")") for v in values if v.endswith(")")}
                values = [
                    v for v in values if v.endswith(")") or PET_KIND.get(v.lower(), v.lower()) not in named
                ]
            fact = make_fact(
                fact.key,
                ", ".join(values),
                confidence=max(fact.confidence, previous.confidence if previous else 0.0),
                keywords=[*(previous.keywords if previous else []), *fact.keywords],
            )
        merged[fact.key] = fact
    return list(merged.values())
