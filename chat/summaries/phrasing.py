"""Phase 1's wording: a sentence lifted from a conversation rewritten so it stands on its own in
a raw memory block ("I prefer diffs" → "The user prefers diffs."), lengths capped, and the
title of a conversation. Pure functions over strings."""

from __future__ import annotations

import re

import lemminflect

from chat.reflection.text import expand, normalise
from chat.reflection.words import is_past_form, is_verb, verb_lemma
from memory.text import FILLER_WORDS, query_terms

ITEM_CHARS = 300
I = re.IGNORECASE  # noqa: E741

# "ok so", "yes,", "thanks!" in front of what was actually said
_LEAD_FILLER = re.compile(
    r"^(?:(?:ok|okay|so|well|yes|yeah|yep|yup|sure|great|cool|right|alright|also|and|but|hmm+|oh|ah|anyway|"
    r"btw|actually|thanks|thank you|perfect|nice|hi|hey|hello|good|awesome|excellent|agreed)\b[\s,!.:;-]*|no,\s*)+",
    I,
)
_MARKDOWN = re.compile(r"\*\*|__|^#+\s*|^>\s*")
# words that do not take an -s after "the user": modals, and verbs already past
_KEEP_VERB = {
    "will", "would", "can", "cannot", "could", "should", "must", "might", "may", "shall", "did", "had",
    "was", "always", "never", "usually", "also", "just", "still", "really", "often", "only", "already",
}  # fmt: skip
_ADVERB = r"(?:always|never|usually|also|just|still|really|often|sometimes|only|already|now|rather)"
_FIRST_PERSON = re.compile(rf"\bI\b(?P<adv>\s+{_ADVERB}\b)?(?:\s+(?P<verb>[A-Za-z]+))?")
_SECOND_PERSON = re.compile(r"\byou\b(?:\s+(?P<verb>are|were|have|do|need|want|can|should|will))?", I)


def clean(text: str) -> str:
    """Whitespace collapsed, Markdown emphasis and leading fillers dropped."""
    text = normalise(_MARKDOWN.sub("", (text or "").strip()))
    text = re.sub(r",?\s+(?:by the way|btw)(?=[.!?]?$)", "", text, flags=I)
    return _LEAD_FILLER.sub("", text).strip()


def cap(text: str, limit: int = ITEM_CHARS) -> str:
    """`text` on one line, at most `limit` characters, cut on a word boundary."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:-") + "…"


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low == "am":
        return "is"
    if low == "have":
        return "has"
    if low in _KEEP_VERB or low.endswith("s") or is_past_form(low) or not is_verb(low):
        return verb
    lemma = verb_lemma(low) or low
    forms = lemminflect.getInflection(lemma, tag="VBZ")
    return forms[0] if forms else verb


_INVERTED = re.compile(
    r"\b(?:should|can|could|would|will|do|did|does|may|might|must|shall|let|make|help)\s*$", I
)


def _user_subject(m: re.Match) -> str:
    adv, verb = m.group("adv") or "", m.group("verb")
    if verb is None:
        return "the user"
    if _INVERTED.search(m.string[: m.start()]):  # "should I use" → "should the user use"
        return f"the user{adv} {verb}"
    return f"the user{adv} {_third_person(verb)}"


def _assistant_subject(m: re.Match) -> str:
    adv, verb = m.group("adv") or "", m.group("verb")
    if verb is None:
        return "the assistant"
    return f"the assistant{adv} {_third_person(verb)}"


def _you(m: re.Match) -> str:
    verb = (m.group("verb") or "").lower()
    agreed = {"are": "is", "were": "was", "have": "has", "do": "does", "need": "needs", "want": "wants"}
    return "the user" + (f" {agreed.get(verb, verb)}" if verb else "")


def sentence(text: str) -> str:
    """Capitalised, ending with a full stop (or the question or exclamation mark it had)."""
    text = text.strip().rstrip(",;:-– ")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".?!…" else text + "."


def user_view(text: str) -> str:
    """The user's first person as "the user": "I prefer my tabs" → "the user prefers the user's tabs"."""
    text = _FIRST_PERSON.sub(_user_subject, text)
    text = re.sub(r"\bmy\b", "the user's", text, flags=I)
    text = re.sub(r"\b(?:me|myself)\b", "the user", text)
    return re.sub(r"\bmine\b", "the user's", text)


def standalone(text: str, *, role: str) -> str:
    """`text` said by `role` ("user", "assistant", "note") as a sentence that needs no context."""
    text = expand(clean(text))
    text = re.sub(r"\blet(?:'s| us)\b", "we will", text, flags=I)
    if role == "user":
        text = user_view(text)
    elif role == "assistant":
        text = _FIRST_PERSON.sub(_assistant_subject, text)
        text = _SECOND_PERSON.sub(_you, text)
        text = re.sub(r"\byour\b", "the user's", text, flags=I)
    return cap(sentence(text))


def imperative(text: str) -> str:
    """A step as an instruction: "I run the tests" / "first, run the tests" → "Run the tests"."""
    text = clean(text)
    text = re.sub(r"^(?:\d+[.)]|[-*•])\s+", "", text)
    text = re.sub(
        r"^(?:(?:first(?:ly)?|then|next|after that|afterwards|finally|lastly|and|also)\b[\s,]*)+",
        "",
        text,
        flags=I,
    )
    text = re.sub(rf"^(?:I|we|you)(?:\s+{_ADVERB})?\s+", "", text, flags=I)
    text = re.sub(r"^(?:need to|have to|should|must|will)\s+", "", text, flags=I)
    return cap(sentence(text), 200)


_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you(?: please)?(?: help(?: me)?(?: to| with)?)?|(?:please )?help me(?: to| with)?|"
    r"I (?:need|want|would like|am trying|am looking|have been trying|was wondering)(?: to| for| if| how)?(?: some help(?: with)?)?|"
    r"how (?:do|can|should|would) (?:I|we)|(?:I have|there is) (?:a|an) (?:question|problem|issue)(?: about| with)?|"
    r"quick question[:,]?|I am (?=\w+ing\b))\s*",
    I,
)
_CLAUSE_START = {"that", "which", "because", "so", "since", "but", "where", "who", "while"}
_TITLE_TAIL = {
    "the",
    "a",
    "an",
    "for",
    "with",
    "and",
    "or",
    "to",
    "of",
    "in",
    "on",
    "at",
    "that",
    "which",
    "my",
    "our",
}


def title_from(sentences: list[str], fallback_terms: list[str]) -> str:
    """3 to 8 words naming the conversation: its first request, else its commonest words."""
    for raw in sentences:
        text = clean(expand(raw)).rstrip("?.! ")
        text = _REQUEST.sub("", text).strip()
        words = [w.strip("`\"'()[],;:") for w in text.split()]
        words = [w for w in words if w]
        if len(words) < 3 or not query_terms(text):
            continue
        cut = next((i for i, w in enumerate(words) if i >= 3 and w.lower() in _CLAUSE_START), len(words))
        words = words[: min(cut, 8)]
        while len(words) > 3 and words[-1].lower() in _TITLE_TAIL:
            words.pop()
        title = " ".join(words)
        return title[0].upper() + title[1:]
    terms = [t for t in fallback_terms if t not in FILLER_WORDS][:3]
    if terms:
        return "Conversation about " + (
            ", ".join(terms[:-1]) + " and " + terms[-1] if len(terms) > 1 else terms[0]
        )
    return "Short conversation without a topic"


def synopsis(title: str, sections: dict[str, list[str]]) -> str:
    """1 to 3 sentences: the topic, what was settled, what was left open."""
    parts = [sentence(f"Topic: {user_view(title)}")]
    counts = []
    for key, one, many in (
        ("decisions", "decision", "decisions"),
        ("constraints", "constraint", "constraints"),
        ("failures", "failure", "failures"),
        ("workflows", "workflow", "workflows"),
        ("preferences", "preference", "preferences"),
    ):
        n = len(sections.get(key, []))
        if n:
            counts.append(f"{n} {one if n == 1 else many}")
    if counts:
        text = ", ".join(counts[:-1]) + (" and " if len(counts) > 1 else "") + counts[-1]
        first = sections["decisions"][0] if sections.get("decisions") else ""
        parts.append(f"It recorded {text}" + (f"; first decision: {first.rstrip('.')}." if first else "."))
    if sections.get("open_questions"):
        parts.append(f"Left open: {sections['open_questions'][0].rstrip('.')}.")
    return cap(" ".join(parts), 600)
