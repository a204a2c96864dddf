"""The text toolkit every reader of memory shares: words, stop words, stems, Jaccard overlap and
sentences. Search, reflection, consolidation and temporal grounding all cut text with these, so
a word or a sentence means the same thing everywhere. Pure functions over strings.
"""

import re
from collections.abc import Set as AbstractSet

TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)

# Words too common to find anything by (search) or to tell two notes apart (dedup, linking,
# distillation).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    also yes ok okay hey hi hello thanks thank please really like get got go going know think
    want let lets s t d ll m re ve don didn doesn isn wasn weren won wouldn shouldn couldn""".split()
)

# Words that cannot be (or start) a value someone states about themselves: "I like stuff",
# "my favourite is the one". Not STOPWORDS: "like", "want" and "going" are search noise but
# fine in a value, and "stuff" or "people" are the reverse.
FILLER_WORDS = {
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "it", "this", "that", "these",
    "those", "some", "any", "all", "every", "here", "there", "what", "which", "who", "how", "when",
    "where", "why", "you", "him", "them", "me", "us", "one", "ones", "stuff", "things", "thing",
    "everything", "anything", "nothing", "something", "everyone", "anyone", "people", "to", "of", "and",
    "or", "so", "too", "very", "really", "just", "in", "on", "at", "for", "with", "from", "by", "about",
    "is", "are", "was", "be", "been", "being", "have", "has", "had", "do", "does", "did", "not", "no",
    "i", "we", "it's", "lot", "bit", "much", "more", "most", "least", "way", "kind", "sort",
}  # fmt: skip

MAX_TERMS = 32


def one_edit(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance exactly 1 (insert, delete, substitute or swap two neighbours)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


def query_terms(text: str, *, limit: int = MAX_TERMS) -> list[str]:
    """Distinct lower-case word tokens of `text`, stop words and one-letter tokens dropped."""
    seen: dict[str, None] = {}
    for token in TOKEN_RE.findall(text.lower()):
        if len(token) < 2 and not token.isdigit():
            continue
        if token in STOPWORDS:
            continue
        seen.setdefault(token, None)
        if len(seen) >= limit:
            break
    return list(seen)


def word_set(text: str) -> set[str]:
    """The content words of `text`, as a set for Jaccard similarity."""
    return set(query_terms(text, limit=10_000))


def stem(word: str) -> str:
    """A crude, consistent stem: "deploying", "deployed", "deploys" → "deploy"; "notes", "note"
    → "not". Only ever compared with other stems."""
    for suffix in ("ing", "ies", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # running → runn → run
    return word[:7]


def stems(text: str) -> set[str]:
    """The stems of the content words of `text`, numbers left out."""
    return {stem(term) for term in query_terms(text, limit=10_000) if not term.isdigit()}


def jaccard(a: AbstractSet[str], b: AbstractSet[str], *, both_empty: float = 1.0) -> float:
    """|a ∩ b| / |a ∪ b|. Two empty sets score `both_empty`: equal for dedup (two notes with no
    content words repeat each other), 0 where nothing in common must mean no overlap."""
    if not a and not b:
        return both_empty
    return len(a & b) / len(a | b)


def stem_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the content-word stems of two texts (0 when either has none)."""
    return jaccard(stems(a), stems(b), both_empty=0.0)


# --- sentences ------------------------------------------------------------------------------

ABBREVIATIONS = {
    "st", "dr", "mr", "mrs", "ms", "jr", "sr", "vs", "etc", "eg", "ie", "approx", "inc", "mt", "prof",
}  # fmt: skip
_CLOSERS = "\"')\\]"
_OPENERS = "\"'(\\["


def sentence_breaks(
    text: str, *, ends: str = ".!?", abbreviations: bool = True, capitalised: bool = False
) -> list[tuple[int, int]]:
    """Where sentences end: (start, end) of each run of closing punctuation (with the quotes or
    brackets that close after it) that is followed by whitespace or the end, and of each run
    of newlines.

    `ends` are the marks that end a sentence (temporal grounding adds ";": a clause has its own
    tense). With `abbreviations`, a full stop after "St", "e.g." or a single letter ends
    nothing — conversation is full of "Dr. Lee"; the distiller's sentences come from notes and
    it splits there. With `capitalised`, a sentence ends only where the next one starts with a
    capital or a digit, so "node v2. then deploy" stays whole.
    """
    after = rf"(?=\s+[{_OPENERS}]?[A-Z0-9]|\s*$)" if capitalised else r"(?=\s|$)"
    boundary = re.compile(rf"[{re.escape(ends)}]+[{_CLOSERS}]*{after}|\n+")
    breaks, start = [], 0
    for m in boundary.finditer(text):
        if abbreviations and m.group(0).startswith("."):
            word = re.search(r"([\w.]+)$", text[start : m.start()])
            if word and (word.group(1).lower().replace(".", "") in ABBREVIATIONS or len(word.group(1)) == 1):
                continue
        breaks.append((m.start(), m.end()))
        start = m.end()
    return breaks


def split_sentences(text: str, **breaks) -> list[str]:
    """The sentences of `text`, stripped, each with its closing punctuation; `breaks` are
    `sentence_breaks`' options."""
    sentences, start = [], 0
    for _, end in sentence_breaks(text, **breaks):
        piece = text[start:end].strip()
        if piece:
            sentences.append(piece)
        start = end
    if text[start:].strip():
        sentences.append(text[start:].strip())
    return sentences
