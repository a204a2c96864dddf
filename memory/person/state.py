"""The person's state in a conversation (issue 13 req. 4): urgency, focus and frustration, each
0..1, moved by every user message and fading with time.

Pure: `message_signals` reads one message (and the person's previous one) and says how much it
pushes each level and by which cues; `state_advance` folds those into the levels as they had
decayed by then; `levels_at` decays stored levels to a moment; `state_text` renders
`### state` (memory/context.py) with the levels at or above `state.minLevel`.

Decay: each level halves every `state.halfLifeMinutes` (exponential). A new push combines with
what is left like independent chances, 1 − (1 − left)(1 − push), so no level passes 1 and
repeated cues saturate instead of adding up. A clear change of topic halves focus first.

The cues are phrase lexicons (below), not sentences: "asap", "deadline", "right now", "!!"
for urgency; "still", "again", "ugh", "doesn't work", shouting in capitals and asking the same
thing again for frustration; staying on the thread of the previous message and short, precise
messages (code, paths, error names) for focus.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime

from memory.config import MemoryConfig
from memory.text import jaccard, word_set
from memory.tokens import estimate_tokens

DIMENSIONS = ("urgency", "focus", "frustration")
MAX_SIGNALS = 12  # ConversationState.signals keeps the newest ones


def _lexicon(entries: dict[str, float]) -> list[tuple[re.Pattern, str, float]]:
    """Phrase → weight, compiled once; a phrase matches on word boundaries, case-insensitive,
    with any run of spaces or a hyphen between its words and an optional apostrophe."""
    compiled = []
    for phrase, weight in entries.items():
        words = [re.escape(w).replace("'", "'?") for w in phrase.split()]
        pattern = r"(?<![\w'])" + r"[\s-]+".join(words) + r"(?![\w'])"
        compiled.append((re.compile(pattern, re.IGNORECASE), phrase, weight))
    return compiled


URGENCY = _lexicon(
    {
        "asap": 0.6,
        "as soon as possible": 0.6,
        "urgent": 0.6,
        "urgently": 0.6,
        "emergency": 0.6,
        "deadline": 0.45,
        "due today": 0.45,
        "due tomorrow": 0.35,
        "right now": 0.45,
        "right away": 0.45,
        "immediately": 0.45,
        "hurry": 0.45,
        "quickly": 0.3,
        "quick": 0.2,
        "time-sensitive": 0.5,
        "no time": 0.45,
        "running out of time": 0.55,
        "by tonight": 0.4,
        "by today": 0.4,
        "end of day": 0.35,
        "eod": 0.35,
        "in an hour": 0.4,
        "in the next hour": 0.45,
        "in five minutes": 0.45,
        "before the meeting": 0.35,
        "before the demo": 0.4,
        "blocking": 0.35,
        "blocker": 0.35,
        "critical": 0.35,
        "prod is down": 0.6,
        "production is down": 0.6,
        "site is down": 0.55,
        "outage": 0.5,
        "need it now": 0.5,
        "need this now": 0.5,
    }
)
FRUSTRATION = _lexicon(
    {
        "still": 0.25,
        "again": 0.25,
        "ugh": 0.45,
        "argh": 0.45,
        "wtf": 0.5,
        "ffs": 0.5,
        "come on": 0.3,
        "seriously": 0.3,
        "doesn't work": 0.4,
        "does not work": 0.4,
        "didn't work": 0.4,
        "did not work": 0.4,
        "not working": 0.35,
        "won't work": 0.35,
        "still broken": 0.5,
        "still failing": 0.5,
        "still not": 0.4,
        "same error": 0.5,
        "same problem": 0.45,
        "same issue": 0.45,
        "keeps failing": 0.5,
        "keeps crashing": 0.5,
        "keeps breaking": 0.5,
        "nothing works": 0.55,
        "i give up": 0.6,
        "useless": 0.45,
        "frustrating": 0.5,
        "frustrated": 0.5,
        "annoying": 0.4,
        "fed up": 0.5,
        "i already tried": 0.4,
        "already tried that": 0.45,
        "tried that": 0.3,
        "that's not what i asked": 0.45,
        "for the third time": 0.55,
        "how many times": 0.5,
        "why won't": 0.35,
        "why does it keep": 0.45,
        "makes no sense": 0.35,
    }
)
# precise content: inline code, a path or file name, an identifier, an error or status code
PRECISE = re.compile(
    r"`[^`]+`|(?:\w+/)+\w+|\b\w+\.(?:py|js|ts|go|rs|java|rb|json|ya?ml|toml|sql|sh|md|html|css)\b"
    r"|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w+\b|\b\w*(?:Error|Exception)\b|\b[45]\d\d\b|--?\w[\w-]*",
)
CAPS_WORD = re.compile(r"\b[A-Z]{4,}\b")
BANGS = re.compile(r"!{2,}")
SHORT_WORDS = 25
ON_TOPIC = 0.2  # word overlap with the previous message that continues its thread
OFF_TOPIC_WORDS = 3  # both messages at least this long and sharing nothing: a new topic
REPEATED = 0.6  # word overlap at which a message asks the previous one's question again


@dataclass
class Signals:
    """What one message pushes: per dimension the push (0..1) and the cues that made it."""

    push: dict[str, float] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 0.0))
    cues: dict[str, list[str]] = field(default_factory=lambda: {d: [] for d in DIMENSIONS})
    topic_changed: bool = False

    def add(self, dimension: str, weight: float, cue: str) -> None:
        self.push[dimension] = 1.0 - (1.0 - self.push[dimension]) * (1.0 - weight)
        if cue not in self.cues[dimension]:
            self.cues[dimension].append(cue)


def _shouting(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    if len(letters) >= 12 and sum(c.isupper() for c in letters) / len(letters) >= 0.7:
        return True
    return len(CAPS_WORD.findall(text)) >= 2


def message_signals(text: str, previous: str = "") -> Signals:
    """The pushes of the person's message `text`, `previous` being their message before it."""
    signals = Signals()
    for lexicon, dimension in ((URGENCY, "urgency"), (FRUSTRATION, "frustration")):
        for pattern, phrase, weight in lexicon:
            if pattern.search(text):
                signals.add(dimension, weight, phrase)
    if BANGS.search(text):
        signals.add("urgency", 0.3, "!!")
    if _shouting(text):
        signals.add("frustration", 0.35, "capitals")
    words, before = word_set(text), word_set(previous) if previous else set()
    overlap = jaccard(words, before, both_empty=0.0) if before else 0.0
    if before and overlap >= REPEATED and len(words) >= 3:
        signals.add("frustration", 0.35, "asked again")
    if before and overlap >= ON_TOPIC:
        signals.add("focus", 0.35, "same thread")
    elif before and not words & before and min(len(words), len(before)) >= OFF_TOPIC_WORDS:
        signals.topic_changed = True
    if len(text.split()) <= SHORT_WORDS and PRECISE.search(text):
        signals.add("focus", 0.3, "short and precise")
    return signals


def decay_factor(*, since: datetime | None, now: datetime, half_life_minutes: float) -> float:
    """What is left of a level after the time from `since` to `now` (1.0 when no time passed)."""
    if since is None or half_life_minutes <= 0:
        return 1.0 if half_life_minutes > 0 else 0.0
    minutes = max(0.0, (now - since).total_seconds() / 60.0)
    return 0.5 ** (minutes / half_life_minutes)


def levels_at(*, levels: dict[str, float], since, now: datetime, config: MemoryConfig) -> dict[str, float]:
    """The stored `levels`, last set at `since`, as they have decayed by `now`."""
    factor = decay_factor(since=since, now=now, half_life_minutes=config["state.halfLifeMinutes"])
    return {d: round(float(levels.get(d, 0.0)) * factor, 4) for d in DIMENSIONS}


def state_advance(
    *, levels: dict[str, float], since, now: datetime, signals: Signals, config: MemoryConfig
) -> dict[str, float]:
    """The levels after a message with `signals` at `now`: the old ones decayed to `now`, focus
    halved by a change of topic, then each push combined with what is left."""
    left = levels_at(levels=levels, since=since, now=now, config=config)
    if signals.topic_changed:
        left["focus"] *= 0.5
    return {d: round(1.0 - (1.0 - left[d]) * (1.0 - signals.push[d]), 4) for d in DIMENSIONS}


def signal_entry(*, message_id: int, at: datetime, signals: Signals) -> dict:
    """How a message's cues are kept in ConversationState.signals (newest first)."""
    entry: dict = {"message": message_id, "at": at.isoformat()}
    entry.update({d: signals.cues[d] for d in DIMENSIONS if signals.cues[d]})
    if signals.topic_changed:
        entry["topic_changed"] = True
    return entry


def _label(level: float) -> str:
    return "high" if level >= 0.7 else "moderate" if level >= 0.45 else "mild"


GUIDANCE = {
    "urgency": "lead with the fix or the answer, details after",
    "frustration": "acknowledge it briefly; do not repeat what already failed, try another way",
    "focus": "stay on the current thread, no digressions",
}


def _recent_cues(signals: list, dimension: str, limit: int = 4) -> list[str]:
    cues: list[str] = []
    for entry in signals[:6]:  # the newest messages' cues: what moved the level lately
        for cue in entry.get(dimension, []) if isinstance(entry, dict) else []:
            if cue not in cues:
                cues.append(cue)
    return cues[:limit]


def state_lines(*, levels: dict[str, float], signals: list, min_level: float) -> list[str]:
    """One line per level at or above `min_level`, highest first, with its recent cues."""
    lines = []
    for dimension in sorted(DIMENSIONS, key=lambda d: -levels.get(d, 0.0)):
        level = levels.get(dimension, 0.0)
        if level < min_level or level <= 0:
            continue
        cues = _recent_cues(signals, dimension)
        because = f" ({', '.join(cues)})" if cues else ""
        lines.append(f"- {dimension}: {_label(level)} {level:.2f}{because} — {GUIDANCE[dimension]}")
    return lines


def state_text(*, conversation, config: MemoryConfig, now, cap: int) -> tuple[str, int]:
    """`### state` of `conversation` at `now` (decayed) under `cap` tokens: the text and how
    many levels did not fit. ("", 0) when calm or never observed. One query (the state row)."""
    from memory.models import ConversationState

    row = ConversationState.objects.filter(conversation_id=conversation.pk).first()
    if row is None or cap <= 0:
        return "", 0
    levels = levels_at(
        levels={d: getattr(row, d) for d in DIMENSIONS}, since=row.updated_at, now=now, config=config
    )
    lines = state_lines(levels=levels, signals=row.signals or [], min_level=config["state.minLevel"])
    if not lines:
        return "", 0
    shown: list[str] = []
    for line in lines:
        if estimate_tokens("\n".join(["### state", *shown, line])) > cap:
            break
        shown.append(line)
    if not shown:
        return "", len(lines)
    return "\n".join(["### state", *shown]), len(lines) - len(shown)


def state_read(*, conversation, config: MemoryConfig, now) -> dict:
    """The conversation's state for the API and the dashboard: the levels decayed to `now`,
    the stored (raw) ones, what moved them (newest first, every key present), the lines
    `### state` would show. Zeros when no user message was observed yet."""
    from memory.models import ConversationState

    row = ConversationState.objects.filter(conversation_id=conversation.pk).first()
    raw = {d: getattr(row, d) if row else 0.0 for d in DIMENSIONS}
    levels = levels_at(levels=raw, since=row.updated_at, now=now, config=config) if row else dict(raw)
    signals = [
        {
            "message": entry.get("message"),
            "at": entry.get("at"),
            **{d: list(entry.get(d, [])) for d in DIMENSIONS},
            "topic_changed": bool(entry.get("topic_changed", False)),
        }
        for entry in (row.signals if row else [])
        if isinstance(entry, dict)
    ]
    return {
        "conversation": conversation.pk,
        "levels": levels,
        "raw": raw,
        "signals": signals,
        "messages": row.messages if row else 0,
        "last_message": row.last_message_id if row else None,
        "updated_at": row.updated_at if row else None,
        "half_life_minutes": config["state.halfLifeMinutes"],
        "min_level": config["state.minLevel"],
        "lines": state_lines(
            levels=levels, signals=row.signals if row else [], min_level=config["state.minLevel"]
        ),
    }
