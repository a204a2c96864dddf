"""The heuristic lesson: the cluster's most central statement, restated about the user and
generalised with the shared topic, an optional second statement that adds what the first one
misses, and one sentence on how much the notes support it and what else they cover.

Centrality is term overlap: a sentence scores by how many of the other notes share its
content words (stems), per content word, so the sentence that best stands for the whole
cluster wins rather than the longest one. Sentences that give advice ("always", "avoid",
"make sure", "because") are preferred, since a lesson is a principle.
"""

import calendar
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from consolidation.distill.procedure import VERB_FORMS, is_step_sentence
from consolidation.distill.text import (
    IRREGULAR_PAST,
    about_the_user,
    clip_words,
    finish,
    sentences_of,
)
from memory.text import STOPWORDS, TOKEN_RE, query_terms, stem, stem_overlap, stems

ADVICE = re.compile(
    r"\b(?:always|never|should|must|avoid|prefers?|preferred|make\s+sure|remember|don't|do\s+not|"
    r"better|best|works?\s+(?:best|better|well)|worked|helps?|because|so\s+that|instead|"
    r"every\s+time|whenever|rather\s+than)\b",
    re.IGNORECASE,
)
MIN_WORDS = 4
MAX_WORDS = 60  # as the LLM prompt asks


@dataclass(frozen=True)
class Candidate:
    score: float
    note_id: int
    sentence: str
    stems: frozenset[str]


def topic_phrase(tag: str) -> str:
    """`project:billing-api` → "billing api"."""
    return re.split(r"[:/]", tag)[-1].replace("-", " ").replace("_", " ").strip()


# words that say when or how often rather than what
VAGUE = {
    *"""first second third next last finally afterwards today tomorrow yesterday week weeks month
    months year years time times thing things stuff always never usually often sometimes again
    still went fine good great nice step steps""".split(),
    *(name.lower() for name in calendar.month_name[1:]),
    *(name.lower() for name in calendar.day_name),
}
_WORD = TOKEN_RE  # the same notion of a word as search


def _lowercase_words(notes) -> set[str]:
    """Words the notes write in lower case somewhere: common words, not names."""
    return {w for note in notes for w in _WORD.findall(note.content) if w.islower()}


def _lower_first(sentence: str, common: set[str]) -> str:
    """The sentence with its first word in lower case, unless that word is a name."""
    match = _WORD.match(sentence)
    if match is None:
        return sentence
    word = match.group(0).lower()
    if (
        word in common
        or word in STOPWORDS
        or word in VERB_FORMS
        or word in IRREGULAR_PAST
        or word in VAGUE
        or (len(word) > 4 and word.endswith("ed"))
    ) and word != "i":
        return sentence[:1].lower() + sentence[1:]
    return sentence


def _names_a_thing(term: str) -> bool:
    """Worth naming as something the notes mention: not a number, a verb form or a vague word."""
    low = term.lower()
    return (
        len(term) >= 4
        and not term.isdigit()
        and low not in VERB_FORMS
        and low not in IRREGULAR_PAST
        and low not in VAGUE
        and low not in STOPWORDS
        and not (term.islower() and low.endswith(("ed", "ing")))
    )


def _span(moments: list[datetime]) -> str:
    first, last = min(moments), max(moments)
    if (first.year, first.month) == (last.year, last.month):
        return f"in {last:%B %Y}"
    if first.year == last.year:
        return f"from {first:%B} to {last:%B %Y}"
    return f"from {first:%B %Y} to {last:%B %Y}"


def _and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _candidates(notes, df: Counter, shared: set[str], *, skip_steps: bool) -> list[Candidate]:
    found = []
    for note in notes:
        for sentence in sentences_of(note.content):
            sentence_stems = stems(sentence)
            hit = sentence_stems & shared
            if len(sentence.split()) < MIN_WORDS or not hit:
                continue
            if skip_steps and is_step_sentence(sentence):
                continue  # the procedure carries it
            score = sum(df[s] for s in hit) / len(notes) / len(sentence_stems) ** 0.5
            if ADVICE.search(sentence):
                score *= 1.5
            if len(sentence.split()) > 40:
                score *= 0.8
            found.append(Candidate(score, note.id, sentence, frozenset(sentence_stems)))
    return found


def _follow(steps: list[str]) -> str:
    shown = [step.rstrip(".!?…") for step in steps[:4]]
    shown = [shown[0]] + [step[:1].lower() + step[1:] for step in shown[1:]]
    tail = ", and so on" if len(steps) > 4 else ""
    return "follow the steps that worked: " + _lower_first(", then ".join(shown), set()) + tail


def _evidence(notes, df: Counter, shared: set[str], covered: set[str]) -> str:
    surface: dict[str, Counter] = {}
    for note in notes:
        for word in _WORD.findall(note.content):
            if _names_a_thing(word):
                surface.setdefault(stem(word.lower()), Counter())[word] += 1
    others = sorted((s for s in shared - covered if s in surface), key=lambda s: (-df[s], s))[:3]
    evidence = f"Seen in {len(notes)} notes {_span([note.when for note in notes])}"
    if others:
        evidence += ", which also mention " + _and_list([surface[s].most_common(1)[0][0] for s in others])
    return evidence + "."


def lesson_text(notes, tag: str, steps: list[str] | None = None) -> str | None:
    """A 1–3 sentence lesson from the notes (SourceNote-like: id, content, when), or None when
    no statement is shared by two of them (nothing general to say).

    With the `steps` of the cluster's procedure, the sentences that list steps are left to the
    procedure; when nothing else is left, the lesson points to the steps."""
    per_note = {note.id: stems(note.content) for note in notes}
    df = Counter(s for note_stems in per_note.values() for s in note_stems)
    shared = {s for s, count in df.items() if count >= 2}
    topic = topic_phrase(tag)
    topic_stems = {stem(word) for word in query_terms(topic)}
    common = _lowercase_words(notes)
    candidates = _candidates(notes, df, shared, skip_steps=bool(steps))
    if not candidates:
        if not steps:
            return None
        lead = _follow(steps)
        first = finish(f"For {topic}, {lead}" if topic else lead)
        return f"{first} {_evidence(notes, df, shared, topic_stems | stems(' '.join(steps)))}"

    ranked = sorted(candidates, key=lambda c: (-c.score, -c.note_id))
    best = ranked[0]
    second = next(
        (
            c
            for c in ranked[1:]
            if c.note_id != best.note_id
            and (c.stems & shared) - best.stems
            and stem_overlap(c.sentence, best.sentence) < 0.5
            and c.score >= 0.5 * best.score
        ),
        None,
    )
    first = finish(about_the_user(clip_words(best.sentence.rstrip(".!?"))))
    if topic and not topic_stems & best.stems:
        first = finish(f"For {topic}, {_lower_first(first, common)}")
    parts = [first]
    covered = set(best.stems) | topic_stems
    if second is not None:
        extra = finish(about_the_user(clip_words(second.sentence.rstrip(".!?"), 24)))
        if len(first.split()) + len(extra.split()) <= MAX_WORDS - 12:  # room for the evidence
            parts.append(extra)
            covered |= second.stems
    parts.append(_evidence(notes, df, shared, covered))
    return " ".join(parts)
