"""Sentence-level reading for the heuristic extractor: expand contractions, and tell statements
from questions, hedges and conditionals (sentences are split by memory.text). Pure functions
over strings."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chat.reflection.lexicon import JOB_HEADS
from chat.reflection.words import is_past_form, repair_typos
from memory.temporal import Tense

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " "})


def normalise(text: str) -> str:
    text = (text or "").translate(_QUOTES)
    return re.sub(r"[ \t]+", " ", text).strip()


_CONTRACTIONS = [
    (r"\b(i)'?m\b", r"\1 am"),
    (r"\b(i)'ve\b|\b(i)ve\b", r"\1\2 have"),
    (r"\b(i)'ll\b", r"\1 will"),
    (r"\b(i)'d\b", r"\1 would"),
    (r"\b(we|you|they)'re\b", r"\1 are"),
    (r"\b(we|you|they)'ve\b", r"\1 have"),
    (r"\b(we|you|they|he|she|it)'ll\b", r"\1 will"),
    (r"\b(we|you|they|he|she)'d\b", r"\1 would"),
    (r"\b(it|that|what|there|he|she|who|name|here)'s\b", r"\1 is"),
    (r"\bcan'?t\b", "cannot"),
    (r"\bwon'?t\b", "will not"),
    (r"\b(do|does|did|is|are|was|were|have|has|had|could|would|should|need)n'?t\b", r"\1 not"),
    (r"\bgonna\b", "going to"),
    (r"\bwanna\b", "want to"),
    # chat shorthand
    (r"(?<=\w )w/?(?= (?:my|our|a|an|the|two|three|some|\w+$))", "with"),
    (r"\bw/(?=\s)", "with"),
    (r"\b(?:bc|cuz|coz)\b", "because"),
]
_CONTRACTIONS_RE = [(re.compile(p, re.IGNORECASE), r) for p, r in _CONTRACTIONS]


def expand(text: str) -> str:
    """ "I'm" → "I am", "don't" → "do not": the fact rules match one spelling only."""
    for pattern, replacement in _CONTRACTIONS_RE:
        text = pattern.sub(replacement, text)
    return re.sub(r"\bi\b", "I", text)


_INTERJECTION = re.compile(
    r"^(?:(?:hi there|hey there|hi|hey|hello|hiya|heya|howdy|yo|ok|okay|fyi|just so you know|so|well|lol|lmao|haha+|ugh+|oh|ah|btw|tbh|honestly|anyway|"
    r"also|and|but|actually|no(?!\s+longer\b)|yes|yeah|yep|nope|hmm+|um+|uh|great|cool|nice|right|ps|fwiw|oh well|"
    r"omg|wow|sorry|thanks|thank you)\b[\s,!.:;-]*)+",
    re.IGNORECASE,
)
_GREETING = re.compile(r"^(?:hi|hey|hello|hiya|heya|howdy|yo|greetings)\b", re.IGNORECASE)
# a label before what the speaker says of themselves: "some background first: I'm …", "big news:
# I moved …" (not "new address for deliveries: 12 …", whose label is the point)
_LEAD_LABEL = re.compile(
    r"^(?:[\w'-]+\s+){0,6}[\w'-]+\s*:\s+(?=(?:I|I'm|I've|I'd|we|we're|my|our)\b)", re.IGNORECASE
)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|shall|is|are|was|were|am|have|has|what|where|when|"
    r"why|how|who|whom|which|whose|any idea|anyone|thoughts|isn't|aren't|don't you)\b",
    re.IGNORECASE,
)
# Without a question mark only the unmistakable shapes count: "do you like jazz", "what is X".
_QUESTION_NO_MARK = re.compile(
    r"^(?:(?:do|does|did|can|could|would|will|should|is|are|was|were|have|has)\s+"
    r"(?:you|u|I|we|it|they|he|she|there|this|that|anyone|anybody)|"
    r"(?:what|where|why|how|who|which)\s+(?:is|are|was|were|do|does|did|can|could|would|should|will|about)"
    r")\b",
    re.IGNORECASE,
)
_STRONG_HEDGE = re.compile(
    r"\b(?:maybe|might|(?<!\bin\s)(?<!\bby\s)(?<!\buntil\s)(?<!\bsince\s)(?-i:may)|perhaps|possibly|thinking (?:about|of)|considering|not sure|unsure|whether|"
    r"would|could|wish|hope to|hoping to|want to|planning to|plan to|if I|someday|one day|eventually|"
    # someone else's opinion about the speaker: "my GP believes I have anaemia"
    r"(?:thinks|believes|suspects|says|said|claims|guesses)\s+(?:that\s+)?I)\b",
    re.IGNORECASE,
)
_MILD_HEDGE = re.compile(
    r"\b(?:I think|I guess|I believe|probably|pretty sure|I suppose|kind of|kinda|sort of|apparently)\b",
    re.IGNORECASE,
)
# A frame that makes the rest of the sentence unreal: a condition, a supposition, a game of
# pretend, another life or world ("pretend I'm a wizard", "in a past life I was a sailor").
_CONDITIONAL = re.compile(
    r"^(?:if|unless|suppose|supposing|assuming|imagine|what if|in case|hypothetically|"
    r"(?:let'?s|let\s+us|we\s+could|I\s+could)?\s*pretend|(?:say|picture)\s+(?=I\b)|"
    r"in\s+(?:another|a\s+(?:parallel|different|past|previous|next|future|perfect|dream))\s+(?:life|universe|world|timeline)|"
    r"in\s+my\s+(?:dreams|next\s+life|past\s+life|fantasy)|"
    # a time still to come frames the rest: "once I've graduated I'll look for work in Oslo"
    r"(?:once|as\s+soon\s+as|by\s+the\s+time)\s+(?:I|we)\b|"
    r"when\s+(?:I|we)(?:'m|'re|\s+am|\s+are)?\s+(?:finally\s+)?(?:become|get|finish|retire|qualify|qualified|grow\s+up|older|rich|famous)\b)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Sentence:
    raw: str  # as written, for note content
    text: str  # the statement part, interjections stripped, contractions expanded
    question: bool  # nothing in it is a statement
    hedged: bool  # "might", "thinking about": no facts
    unsure: bool  # "I think", "probably": facts at lower confidence
    conditional: bool
    greeted: bool
    sarcastic: bool = False  # "oh I LOVE a 5am alarm 🙃": no preference from it
    tense_hint: Tense = None  # the tense of the sentence before, for dates without a cue of their own


# Chat drops the subject: "been learning German", "living in Leeds now", "spent April in Hanoi",
# "was diagnosed with asthma"; and so does a clause after a comma: "…, based in Oslo".
_NO_SUBJECT = re.compile(
    r"^(?P<adv>(?:just|finally|recently|also|still|now|then|currently|and|and\s+then|but)\s+)*"
    r"(?:(?P<been>been)|(?P<ing>living|working|studying|learning|thinking|planning|going|heading|flying|moving|"
    r"trying|hoping|based|commuting|starting|taking|using|running|seeing|dating|doing|teaching|freelancing)|"
    r"(?P<was>was|had)|(?P<neg>do\s+not|did\s+not|never|no\s+longer(?!\s+\w+ing\b))|(?P<not>not|no\s+longer)|"
    r"(?P<state>fluent|bilingual|allergic|married|engaged|divorced|single|pregnant|originally\s+from)|"
    r"(?P<present>live|work|start|started|joined|moved|quit|went|got|\w+))\b",
    re.IGNORECASE,
)
_NOT_IN_TITLE = (
    r"is|are|was|were|am|be|been|he|she|they|it|you|we|I|my|his|her|their|our|your|the|a|an|not|no|"
    r"this|that|what|who|need|want|like|hate|love|for|of|to"
)
_JOB_HEADS = "|".join(sorted((re.escape(h) for h in JOB_HEADS), key=len, reverse=True))
# A clause that is a bare job title: "staff nurse at the Royal Free", "lawyer in Lyon".
_BARE_TITLE = re.compile(
    rf"^(?P<det>(?:a|an)\s+)?(?:(?!(?:{_NOT_IN_TITLE})\b)[\w-]+\s+){{0,3}}?(?:{_JOB_HEADS})"
    r"(?:\s+(?:at|for|with|in)\s+(?:the\s+)?(?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3})*$",
    re.IGNORECASE,
)
_ON_SOMETHING = re.compile(r"^(?:(?:full[- ]time|mostly|now|still|only)\s+)*on\s+(?-i:[A-Z])", re.IGNORECASE)
_STILL_THERE = re.compile(r"^(?:still|currently|now)\s+(?:in|at)\s+(?-i:[A-Z])", re.IGNORECASE)
_FIRST_PERSON_START = re.compile(r"^(?:I|we)\b", re.IGNORECASE)
_INTRODUCTION = re.compile(
    r"^(?:(?:this\s+is|it\s+is|my\s+name\s+is)\s+)?(?-i:[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})(?:\s+here)?$|"
    r"^(?:this\s+is|my\s+name\s+is)\s+\w+(?:\s+\w+)?$",
    re.IGNORECASE,
)


def _add_subject(text: str, *, first_person: bool = True) -> str:
    """Give a subjectless statement the speaker as subject; `first_person` says whether the
    sentence it belongs to is about the speaker (a clause of "my brother lives …, works …" is not)."""
    if not first_person or _FIRST_PERSON_START.match(text):
        return text
    if _BARE_TITLE.match(text) and not re.match(r"^(?:a|an)?\s*(?:the|my|our)\b", text, re.I):
        head = (
            text
            if re.match(r"^(?:a|an)\s", text, re.I)
            else ("an " if text[:1].lower() in "aeiou" else "a ") + text
        )
        return "I am " + head
    if _ON_SOMETHING.match(text) or _STILL_THERE.match(
        text
    ):  # "…, full time on Fedora now", "still in Leeds"
        return "I am " + text
    m = _NO_SUBJECT.match(text)
    if not m:
        return text
    if m["been"]:
        return "I have " + text
    if m["ing"] or m["not"] or m["state"]:
        return "I am " + text
    if m["neg"]:
        return "I " + text
    if m["was"]:
        rest = text[m.end() :].split()
        return "I " + text if rest and (rest[0].lower().endswith("ed") or is_past_form(rest[0])) else text
    word = m["present"].lower()
    if word in ("live", "work", "start", "started", "joined", "moved", "quit", "went", "got") or is_past_form(
        word
    ):
        return "I " + text
    return text


_CLAUSE = re.compile(r"(,\s+|;\s+|\s+-+\s+|\s+—\s+|\s+and\s+then\s+|,?\s+then\s+|\s+and\s+|\s+but\s+)")


def _add_subjects(text: str) -> str:
    """Subjects for the sentence and for each subjectless clause in it, when it speaks of the speaker."""
    parts = _CLAUSE.split(text)
    parts[0] = _add_subject(parts[0])
    if len(parts) == 1:
        return parts[0]
    # "Priya here — staff nurse at …": a self-introduction speaks of the speaker too
    first_person = bool(_FIRST_PERSON_START.match(parts[0]) or _INTRODUCTION.match(parts[0]))
    out = [parts[0]]
    for sep, clause in zip(parts[1::2], parts[2::2], strict=True):
        if re.search(
            r"\b(?:he|she|they|my\s+(?!name\b)\w+|our\s+\w+|his|her)\b", out[-1], re.I
        ) and not _FIRST_PERSON_START.match(out[-1]):
            first_person = False
        fixed = _add_subject(clause, first_person=first_person)
        out += [sep, fixed]
        if _FIRST_PERSON_START.match(fixed):
            first_person = True
    return "".join(out)


# Irony flags: an upside-down or eye-roll face, "/s", a shouted verb of liking in a
# lower-case sentence, and the stock phrases of complaint dressed as praise.
_IRONY_MARKS = r"[\U0001F643\U0001F644\U0001F612\U0001F611\U0001F921\U0001F480]|(?:^|\s)/s\b|\(not\)|"
_IRONY_PHRASES = (
    r"\b(?:yeah\s+right|love\s+that\s+for\s+me|living\s+the\s+dream|said\s+no\s+one\s+ever|"
    r"just\s+what\s+I\s+needed|thanks\s+a\s+lot|nothing\s+says\s+\w+\s+like|because\s+I\s+(?:totally|just|really|so)\s+"
    r"(?:love|enjoy|adore|like)|my\s+favou?rite\s+thing\s+(?:in\s+the\s+world\s+)?is\s+when|oh\s+(?:great|joy|goody|wonderful)|"
    r"what\s+a\s+(?:treat|joy|delight)|best\s+\w+\s+ever\s*[.!]*\s*(?:not|lol)\b|"
    # "sure, I'm a proper gardener, killed another cactus": a title claimed with a scoff
    r"(?:^|[.!?]\s+)(?:yeah|yea|sure|oh\s+yes|oh\s+yeah|right),?\s+(?:I'?m|I\s+am)\s+(?:a\s+|an\s+)?(?:real|proper|true|total|regular)\s+\w+)"
)
_SARCASM = re.compile(_IRONY_MARKS + _IRONY_PHRASES, re.IGNORECASE)
# the stock phrases alone: an eye-roll emoji may mock one clause ("'sir' 🙄") and not the rest
_IRONY = re.compile(_IRONY_PHRASES, re.IGNORECASE)
_SHOUTED_LIKING = re.compile(r"\b(?-i:LOVE|LOVED|LOVING|ADORE|ENJOY|LIKE|AWESOME|GREAT|FUN|THRILLED)\b")


# Words in quotes are someone else's (a remark, a lyric, a title, a slogan): 'my aunt keeps saying "I
# work in banking"' and "the guide said 'we live on the island'" say nothing of the speaker. Single quotes count
# when they open after a space and close before one; an apostrophe inside a word ("I'm") is no quote.
# One quoted word is a name or a term ("my nickname is 'Bear'"), not speech: it stays.
_QUOTED = re.compile(r"(?:(?<=\s)|^)['\"‘“](?:[^'\"‘“’”]|(?<=\w)['’](?=\w)){3,80}['\"’”](?=\s|[,.!?;:]|$)")


def without_quotes(text: str, replacement: str) -> str:
    """`text` with every quoted clause (two words or more) replaced by `replacement`."""
    return _QUOTED.sub(lambda m: replacement if " " in m.group(0).strip() else m.group(0), text)


def is_ironic(raw: str) -> bool:
    """A stock phrase of irony in this very sentence (not a shouted "LOVE", which may be glee)."""
    return bool(_IRONY.search(raw))


def is_sarcastic(raw: str) -> bool:
    if _SARCASM.search(raw):
        return True
    return bool(_SHOUTED_LIKING.search(raw)) and bool(re.search(r"[a-z]{3}", raw))


def read_sentence(raw: str, *, sarcastic: bool = False, tense_hint: Tense = None) -> Sentence:
    stripped = _INTERJECTION.sub("", raw).strip()
    stripped = _LEAD_LABEL.sub("", stripped, count=1)
    statement, question = _statement_part(stripped)
    statement = without_quotes(
        statement, "that"
    )  # 'translate "I live in Madrid"' says nothing of the speaker
    text = _add_subjects(expand(repair_typos(statement)))
    return Sentence(
        raw=raw,
        text=text,
        question=question,
        hedged=bool(_STRONG_HEDGE.search(text)),
        unsure=bool(_MILD_HEDGE.search(text)),
        conditional=bool(_CONDITIONAL.match(stripped)),
        greeted=bool(_GREETING.match(raw)),
        sarcastic=sarcastic or is_sarcastic(raw),
        tense_hint=tense_hint,
    )


# what ends the clause said before a hedge: "I work at Arup, but might …", "… and maybe …"
_BEFORE_HEDGE_END = re.compile(
    r"(?:\s*[,;:-]\s*|\s+)(?:(?:and|but|so|though|although|yet|or|which|who|that)\s*)*$", re.I
)


def before_hedge(s: Sentence) -> str | None:
    """The part of a hedged sentence said before its hedge, when it is a clause of its own: the
    hedge's scope starts at its cue ("my wife Ines thinks I …", "I teach in Lyon but might
    move"), so what comes before is said plainly. None when nothing of substance precedes it."""
    if not s.hedged or not (m := _STRONG_HEDGE.search(s.text)):
        return None
    prefix = _BEFORE_HEDGE_END.sub("", s.text[: m.start()])
    if len(prefix.split()) < 3 or _CONDITIONAL.match(prefix) or _STRONG_HEDGE.search(prefix):
        return None
    return prefix


def _statement_part(sentence: str) -> tuple[str, bool]:
    """The leading statement of a sentence; "I earn 85k, is that enough?" keeps "I earn 85k"."""
    if not sentence.rstrip().endswith("?"):
        if _QUESTION_NO_MARK.match(sentence):
            return "", True
        return sentence.rstrip(" .!"), False
    parts = re.split(r",\s*|\s+-+\s+|\s+—\s+", sentence.rstrip(" ?"))
    kept: list[str] = []
    for part in parts:
        if _QUESTION_START.match(part) or re.match(r"(?:is that|any|should I|what|thoughts)\b", part, re.I):
            break
        kept.append(part)
    if not kept or len(kept) == len(parts):
        return "", True
    return ", ".join(kept), False


def is_all_lowercase(text: str) -> bool:
    """True when case carries no information: no capitals except a lone "I"."""
    return not re.search(r"[A-Z]", re.sub(r"\bI\b", "", text))


_NEGATION = re.compile(r"\b(?:not|never|no longer|nobody|no one|hardly|neither|nor)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[,;:]|\bbut\b|\bhowever\b", re.IGNORECASE)


def negated_before(text: str, pos: int, window: int = 40) -> bool:
    """Is there a negation between the start of the clause and `pos`?"""
    head = text[max(0, pos - window) : pos]
    breaks = list(_CLAUSE_BREAK.finditer(head))
    if breaks:
        head = head[breaks[-1].end() :]
    return bool(_NEGATION.search(head))


_SUBJECTS = re.compile(
    r"\b(?P<s>I|we|he|she|they|his|her|their|my (?!own\b)\w+(?:'s)?|our \w+)\b", re.IGNORECASE
)


def first_person_at(text: str, pos: int) -> bool:
    """Is the nearest subject before `pos` the speaker ("I", "we")?"""
    subjects = [m.group("s").lower() for m in _SUBJECTS.finditer(text, 0, pos)]
    return bool(subjects) and subjects[-1] in ("i", "we")


def title_if_lower(value: str) -> str:
    return value.title() if value == value.lower() else value
