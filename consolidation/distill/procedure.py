"""Reading the steps out of notes that describe a way of doing something.

A step is a clause that starts with an imperative verb ("Run the migrations"), or with a
first-person past or present form of one ("then I ran the migrations", "we restart the
workers"), which is restated as the imperative. Clauses come from list items ("1.", "-"),
sentences, and sentences cut at sequence words (then, after that, finally, "; ", ", and ").
A note describes steps when it yields at least two and names their order (first, then, after
that, finally, a numbered list…): imperatives without an order are a to-do list, not a way of
doing something.

The note with the most steps is the backbone of the procedure; steps of the other step-notes
that say something new are merged in at their relative position. Steps are advice text that
a person reads; nothing ever executes them.
"""

import re
from dataclasses import dataclass

from consolidation.distill.text import finish, lines_of, sentences_of
from memory.text import STOPWORDS, stem_overlap

MIN_STEPS = 2
MAX_STEPS = 8
MAX_STEP_CHARS = 200

VERBS = """add adjust apply archive ask avoid back bake book boil build buy call cancel change check
choose clean clear click close commit compare compile confirm configure connect copy create cut
debug delete deploy detach disable disconnect download drain drink drive drop dry eat edit email
empty enable enter export fetch fill filter find fix flush follow format freeze get give go grab
heat import increase install keep kill launch leave let load lock log look lower make measure
merge migrate mix monitor mount move notify open pack paste pay pick pin ping place plug pour
prepare press print provision pull push put raise read reboot rebuild recompile reconnect redeploy reduce
refresh register reinstall reload remove rename renew repeat replace reply request rerun reset
resize restart restore retry return review revert rinse roll rotate run save scale schedule
search select send set share ship shut sign simmer skip sleep snapshot soak split start stir
stop store submit swap switch sync take tell test tighten toggle touch turn unlock unmount
unplug unpin update upgrade upload use validate verify wait warm wash watch wipe write""".split()

IRREGULAR = {
    "ate": "eat",
    "bought": "buy",
    "built": "build",
    "chose": "choose",
    "drank": "drink",
    "drove": "drive",
    "found": "find",
    "froze": "freeze",
    "gave": "give",
    "got": "get",
    "kept": "keep",
    "left": "leave",
    "made": "make",
    "paid": "pay",
    "ran": "run",
    "rebuilt": "rebuild",
    "reran": "rerun",
    "sent": "send",
    "slept": "sleep",
    "took": "take",
    "told": "tell",
    "went": "go",
    "wrote": "write",
}


def _inflections(base: str) -> set[str]:
    forms = {base + "s", base + "es", base + "ed", base + "d", base + base[-1] + "ed", base + "ing"}
    if base.endswith("y"):
        forms |= {base[:-1] + "ied", base[:-1] + "ies"}
    if base.endswith("e"):
        forms.add(base[:-1] + "ing")
    forms.add(base + base[-1] + "ing")
    return forms


# every recognised form of a verb → its imperative
VERB_FORMS: dict[str, str] = {}
for _base in VERBS:
    for _form in _inflections(_base):
        VERB_FORMS.setdefault(_form, _base)
VERB_FORMS.update(IRREGULAR)
VERB_FORMS.update({base: base for base in VERBS})
_GERUND = {form for form, base in VERB_FORMS.items() if form.endswith("ing") and form != base}

_MARKER = re.compile(
    r"^(?:(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|then|next|after\s+(?:that|this)|afterwards|"
    r"finally|lastly|and\s+then|and|also|now|once\s+(?:that|done|it\s+is\s+done))\b[\s,:;-]*)+",
    re.IGNORECASE,
)
# what names an order; a lone "next" does not ("Next step: ask Bob" is a to-do, not a sequence)
_SEQUENCE = re.compile(
    r"\b(?:first(?:ly)?|then|after\s+(?:that|this)|afterwards|finally|lastly|step\s+\d)\b",
    re.IGNORECASE,
)
_SEQUENCE_SEPARATOR = re.compile(r";|\bthen\b|\bafter\b|\bafterwards\b|\bfinally\b", re.IGNORECASE)
_PERSON = re.compile(
    r"^(?:i|we|you)\s+(?:(?:always|usually|just|also|then|first|finally|simply|now|quickly|carefully|"
    r"had\s+to|have\s+to|need\s+to|needed\s+to|should|must)\s+)*",
    re.IGNORECASE,
)
_ADVERB = re.compile(r"^(?:always|just|simply|carefully|quickly|then|first|now|please)\s+", re.IGNORECASE)
_SPLIT = re.compile(
    r"(;\s*|,?\s+and\s+then\s+|,\s*then\s+|\s+then\s+|,\s*after\s+(?:that|this),?\s+|,\s*afterwards,?\s+|"
    r",\s*(?:and\s+)?finally,?\s+|,\s*and\s+|\s+and\s+|,\s+)",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^(?P<heading>[^:]{1,80}):\s+(?P<rest>\S.*)$")
_POSSESSIVES = [
    (re.compile(r"\bmy\b", re.IGNORECASE), "your"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "yours"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "yourself"),
    (re.compile(r"\bour\b", re.IGNORECASE), "the"),
]


@dataclass
class Step:
    text: str
    note_id: int
    position: float  # 0 (first step of its note) … 1 (last)


def base_form(word: str) -> str:
    """The imperative of a past form the verb list does not know: redeployed → redeploy,
    moved → move, logged → log, tidied → tidy."""
    if word.endswith("ied") and len(word) > 4:
        return word[:-3] + "y"
    if not word.endswith("ed") or len(word) <= 4:
        return word
    root = word[:-2]
    if root[-1] == root[-2] and root[-1] not in "aeiouls":
        return root[:-1]
    if root[-1] in "vzcg" or (root[-1] == "s" and root[-2] in "aeiou"):
        return root + "e"
    return root


def as_step(clause: str, *, after_sequence: bool = False) -> str | None:
    """The clause as an imperative step, or None when it does not start with an action.

    After an explicit sequence word ("then", "after that", "finally", ";") a clause that starts
    with any lower-case word other than a function word is taken as a step even when the verb
    is not in the list ("then redeployed to staging")."""
    text = _MARKER.sub("", clause.strip())
    text = _PERSON.sub("", text)
    text = _ADVERB.sub("", text)
    first, _, rest = text.partition(" ")
    word = first.strip(",.;:")
    verb = VERB_FORMS.get(word.lower())
    if verb is None and after_sequence and word.isalpha() and word.islower() and word not in STOPWORDS:
        verb = base_form(word)
    if verb is None or word.lower() in _GERUND:
        return None
    body = f"{verb} {rest}".strip()
    for pattern, replacement in _POSSESSIVES:
        body = pattern.sub(replacement, body)
    body = finish(body)
    if len(body) > MAX_STEP_CHARS:
        body = body[:MAX_STEP_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return body


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """The sentence cut at sequence words and separators, each clause with whether a sequence
    word came before it; a fragment that is not an action stays with the clause before it
    ("buy eggs, milk and butter" is one step)."""
    parts = _SPLIT.split(sentence)
    clauses: list[tuple[str, bool]] = []
    for i in range(0, len(parts), 2):
        fragment = parts[i]
        separator = parts[i - 1] if i else ""
        sequenced = bool(_SEQUENCE_SEPARATOR.search(separator))
        if clauses and as_step(fragment, after_sequence=sequenced) is None:
            text, flag = clauses[-1]
            clauses[-1] = (text + separator + fragment, flag)
        else:
            clauses.append((fragment, sequenced))
    return clauses


def note_steps(content: str) -> tuple[list[str], bool]:
    """The steps a note describes, in order, and whether it names their order."""
    lines = lines_of(content)
    listed = sum(1 for _, is_item in lines if is_item) >= 2
    ordered = listed or bool(_SEQUENCE.search(content))
    steps: list[str] = []
    for sentence in sentences_of(content):
        if sentence.endswith(":"):
            continue  # "Reset the router:" introduces the steps below it
        heading = _HEADING.match(sentence)
        if heading and as_step(heading["rest"]):
            sentence = heading["rest"]  # "Deploy steps that worked: first I …"
        for clause, sequenced in _clauses(sentence.rstrip(".!?")):
            step = as_step(clause, after_sequence=sequenced)
            if step and step not in steps:
                steps.append(step)
    return steps, ordered


def describes_steps(steps: list[str], ordered: bool) -> bool:
    return len(steps) >= MIN_STEPS and ordered


def is_step_sentence(sentence: str) -> bool:
    """A sentence that is itself a sequence of steps (it belongs in a procedure)."""
    steps, ordered = note_steps(sentence)
    return describes_steps(steps, ordered)


def _is_repeat(step: str, kept: list[Step]) -> bool:
    return any(stem_overlap(step, other.text) >= 0.5 for other in kept)


def merge_steps(per_note: list[tuple[int, list[str]]]) -> list[str]:
    """One ordered list from the step-notes: the longest (the latest on ties) is the backbone;
    new steps of the others are placed at their relative position; at most MAX_STEPS."""
    if not per_note:
        return []
    backbone_id, backbone = max(reversed(per_note), key=lambda item: len(item[1]))
    kept = [
        Step(text, backbone_id, i / max(len(backbone) - 1, 1)) for i, text in enumerate(backbone[:MAX_STEPS])
    ]
    for note_id, steps in per_note:
        if note_id == backbone_id:
            continue
        for i, text in enumerate(steps):
            if len(kept) >= MAX_STEPS:
                break
            if not _is_repeat(text, kept):
                kept.append(Step(text, note_id, i / max(len(steps) - 1, 1)))
    kept.sort(key=lambda step: (step.position, step.note_id != backbone_id))
    return [step.text for step in kept]
