"""The interaction contract (issue 13 req. 3): how this person likes to work in one assistant
mode — depth, directness, pushback tolerance and pace — learned from their messages and
correctable by them (memory/services/contract.py writes it; docs/contract.md).

Each dimension is a scale from -1 to +1 (`DIMENSIONS`). A user message gives

- **signals** (`message_signals`): explicit requests and complaints ("be brief", "too long",
  "don't sugarcoat", "slow down"; lexicon.py), reactions to pushback ("fair point, you're
  right" takes it, "no, do it my way" refuses it — stronger when the answer before pushed
  back), and corrections ("no, that's not what I asked"), which strengthen the message's other
  signals or, alone, read the miss from the length of the answer they correct;
- **style votes** (`style_votes`): its length without pasted code or logs, its softeners and
  terse imperatives, whether it is a bare "next" — weak, each message one small vote.

`dimension_apply` folds both into a dimension: the signals into a recency-weighted mean (a new
signal of weight w keeps 0.85^w of the old weight), the votes into a running mean over about
the last 30 messages, worth at most 0.8 of one explicit request alone and a quarter of that
beside explicit signals (what they asked for outweighs how they write). The confidence grows with the
weight and with agreement: one "be brief" gives 0.56, terse messages alone need a dozen or more to
reach 0.35 and stay under 0.5, and signals that disagree cancel out. A dimension the person set
(`source` "person") is never moved by observation until they reset it.

Everything here is pure except `contract_text`, which reads the row it renders.
"""

import math
import re
from dataclasses import dataclass, field

from memory.config import MemoryConfig
from memory.models import InteractionContract
from memory.modes import Mode
from memory.person.contract.lexicon import (
    ACKNOWLEDGEMENT,
    ASSISTANT_PUSHBACK,
    CONTINUATION,
    CORRECTION,
    CORRECTION_CUE,
    CUES,
    IMPERATIVE_START,
    NEGATION,
    PUSHBACK,
    SHOUTING,
    SOFTENERS,
    WHY_QUESTION,
)
from memory.tokens import estimate_tokens

# dimension → (value at -1, value around 0, value at +1)
DIMENSIONS: dict[str, tuple[str, str, str]] = {
    "depth": ("brief", "balanced", "detailed"),
    "directness": ("diplomatic", "balanced", "blunt"),
    "pushback": ("avoid", "moderate", "welcome"),
    "pace": ("slow", "steady", "fast"),
}
# what each value asks of the assistant, as the context line says it
GUIDANCE = {
    ("depth", "brief"): "answer first, keep it short",
    ("depth", "balanced"): "a short answer, then the key details",
    ("depth", "detailed"): "explain the reasoning, with background",
    ("directness", "diplomatic"): "tactful, gentle wording",
    ("directness", "balanced"): "plain but kind",
    ("directness", "blunt"): "say it plainly, no sugarcoating",
    ("pushback", "avoid"): "do what is asked; flag real risks once",
    ("pushback", "moderate"): "raise real risks, not small points",
    ("pushback", "welcome"): "challenge weak ideas, disagree openly",
    ("pace", "slow"): "one step at a time, check before moving on",
    ("pace", "steady"): "a step at a time, no rush",
    ("pace", "fast"): "move quickly, skip the basics",
}
SOURCES = ("observed", "person")
MAX_EVIDENCE = 20
RETAIN = 0.85  # the weight an earlier signal keeps per unit of new signal weight
SATURATION = 1.2  # weight at which confidence reaches 1 - 1/e (times the agreement)
STYLE_WINDOW = 30  # the style mean runs over about this many messages
STYLE_MAX_WEIGHT = 0.8  # style, however consistent, counts as at most this much explicit weight
STYLE_RAMP = 10.0  # messages over which style reaches (1 - 1/e) of that
STYLE_BESIDE_REQUESTS = 0.25  # style's share once there are explicit signals too
MIDDLE_BAND = 0.25  # |score| below this reads as the middle value
CORRECTION_BOOST = 1.25
PUSHBACK_AFTER_PUSHBACK = 2.0  # a reaction right after the assistant pushed back counts double
LONG_ANSWER_WORDS = 150
SHORT_ANSWER_WORDS = 40


@dataclass(frozen=True)
class Signal:
    dimension: str
    direction: float  # -1..1
    weight: float
    kind: str  # request | complaint | correction | pushback
    cue: str  # the words that gave it (from the lexicon's match)


@dataclass
class Observation:
    """What one user message says about the contract."""

    signals: list[Signal] = field(default_factory=list)
    style: dict[str, float] = field(default_factory=dict)  # dimension → vote -1..1
    correction: bool = False


def normalise(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'").lower()
    text = re.sub(r"\btl;\s?dr\b", "tldr", text)
    return re.sub(r"\s+", " ", text).strip()


_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_CODE_LINE = re.compile(r"^\s*(?:[$>#]|at |File \"|Traceback|\w+Error\b|[{}\[\]()<>;=]|\S+\(.*\)\s*$)")


def prose(text: str) -> str:
    """`text` without pasted code, commands, logs and stack traces: what its length says about
    how the person writes."""
    text = _FENCE.sub(" ", text)
    lines = [line for line in text.splitlines() if not _CODE_LINE.match(line)]
    kept = []
    for line in lines:
        words = line.split()
        symbols = sum(1 for w in words if not re.search(r"[a-zA-Z]{2}", w))
        if words and symbols / len(words) > 0.5:
            continue
        kept.append(line)
    return " ".join(kept)


def words(text: str) -> int:
    return len(re.findall(r"[\w']+", text))


def assistant_pushed_back(text: str) -> bool:
    return bool(ASSISTANT_PUSHBACK.search(normalise(text or "")))


def _clauses(text: str) -> list[str]:
    return [c.strip() for c in re.split(r"[.!?;\n]+|,\s*(?:but|and|so)\s+|\s+but\s+", text) if c.strip()]


def message_signals(text: str, *, previous: str = "") -> Observation:
    """The signals and style votes of one user message; `previous` is the assistant message it
    answers ("" when none)."""
    observation = Observation(style=style_votes(text))
    flat = normalise(text)
    if not flat:
        return observation
    after_pushback = assistant_pushed_back(previous)
    seen: set[tuple[str, int]] = set()
    for clause in _clauses(flat):
        for cue in CUES:
            for match in cue.pattern.finditer(clause):
                direction = cue.direction
                if cue.flips and NEGATION.search(clause[: match.start()]):
                    direction = -direction
                key = (cue.dimension, direction)
                if key in seen:
                    continue  # one signal per dimension and direction per message
                seen.add(key)
                weight = cue.weight
                if cue.kind == PUSHBACK and after_pushback:
                    weight = min(1.0, weight * PUSHBACK_AFTER_PUSHBACK)
                observation.signals.append(Signal(cue.dimension, direction, weight, cue.kind, match.group(0)))
    correction = CORRECTION_CUE.search(flat)
    if correction:
        observation.correction = True
        said = correction.group(0)
        if observation.signals:
            observation.signals = [
                Signal(s.dimension, s.direction, s.weight * CORRECTION_BOOST, s.kind, s.cue)
                for s in observation.signals
            ]
        elif previous:
            length = words(prose(previous))
            if after_pushback:
                observation.signals.append(Signal("pushback", -1, 0.7, CORRECTION, said))
            elif length >= LONG_ANSWER_WORDS:
                observation.signals.append(Signal("depth", -1, 0.7, CORRECTION, said))
            elif length <= SHORT_ANSWER_WORDS:
                observation.signals.append(Signal("depth", 1, 0.5, CORRECTION, said))
    return observation


def style_votes(text: str) -> dict[str, float]:
    """Weak votes from how the message is written: depth from its prose length (a question
    asking why or how leans deeper), directness from softeners against terse commands or
    swearing, pace from a bare "next". An acknowledgement ("ok thanks") votes on nothing."""
    flat = normalise(text)
    if not flat:
        return {}
    if CONTINUATION.match(flat) and words(flat) <= 4:
        return {"pace": 1.0}
    if ACKNOWLEDGEMENT.match(flat):
        return {}
    body = normalise(prose(text))
    count = words(body)
    if count == 0:
        return {}  # only code or a log: nothing about how they write
    votes: dict[str, float] = {}
    if count <= 6:
        depth = -1.0
    elif count <= 12:
        depth = -0.5
    elif count >= 80:
        depth = 1.0
    elif count >= 40:
        depth = 0.5
    else:
        depth = 0.0
    if WHY_QUESTION.search(body):
        depth = min(1.0, depth + 0.5)
    votes["depth"] = depth
    softeners = len(SOFTENERS.findall(body))
    if softeners >= 2:
        votes["directness"] = -1.0
    elif softeners == 1:
        votes["directness"] = -0.5
    elif SHOUTING.search(body) or _shouted(text):
        votes["directness"] = 1.0
    elif IMPERATIVE_START.match(body) and count <= 15:
        votes["directness"] = 0.5
    else:
        votes["directness"] = 0.0
    if body.count("?") >= 3:
        votes["pace"] = -0.5
    return votes


def _shouted(text: str) -> bool:
    caps = re.findall(r"\b[A-Z]{3,}\b", text)
    return len(caps) >= 2


def _saturate(weight: float) -> float:
    return 1.0 - math.exp(-max(weight, 0.0) / SATURATION)


def value_of(dimension: str, score: float) -> str:
    low, middle, high = DIMENSIONS[dimension]
    if score <= -MIDDLE_BAND:
        return low
    if score >= MIDDLE_BAND:
        return high
    return middle


def score_of(dimension: str, value: str) -> float:
    low, middle, high = DIMENSIONS[dimension]
    return {low: -1.0, middle: 0.0, high: 1.0}[value]


def derive(dimension: str, state: dict) -> dict:
    """The dimension's value, score and confidence from its explicit and style parts."""
    explicit = state.get("explicit") or {}
    style = state.get("style") or {}
    w_e, s_e = float(explicit.get("weight", 0.0)), float(explicit.get("score", 0.0))
    n_s, s_s = int(style.get("messages", 0)), float(style.get("score", 0.0))
    w_s = STYLE_MAX_WEIGHT * (1.0 - math.exp(-n_s / STYLE_RAMP)) if n_s else 0.0
    if w_e:
        w_s *= STYLE_BESIDE_REQUESTS  # what the person asked for outweighs how they write
    total = w_e + w_s
    score = (s_e * w_e + s_s * w_s) / total if total else 0.0
    confidence = _saturate(total) * abs(score)
    return {
        **state,
        "value": value_of(dimension, score),
        "score": round(score, 4),
        "confidence": round(confidence, 4),
    }


def dimension_apply(
    dimension: str, state: dict | None, *, signals: list[Signal], vote: float | None, message_id: int, at: str
) -> dict:
    """The dimension after one message's `signals` on it and its style `vote` (None: it voted
    on nothing here). A person's setting is returned unchanged."""
    state = dict(state or {})
    if state.get("source") == "person":
        return state
    explicit = dict(state.get("explicit") or {"score": 0.0, "weight": 0.0, "signals": 0})
    evidence = list(state.get("evidence") or [])
    reasons = []
    for signal in signals:
        kept = explicit["weight"] * RETAIN**signal.weight
        weight = kept + signal.weight
        explicit["score"] = (explicit["score"] * kept + signal.direction * signal.weight) / weight
        explicit["weight"] = weight
        explicit["signals"] = int(explicit["signals"]) + 1
        reasons.append(f'{signal.kind}: "{signal.cue}"')
    if signals:
        evidence = [i for i in evidence if i != message_id] + [message_id]
        state["reason"] = "; ".join(reasons)[:300]
    state["evidence"] = evidence[-MAX_EVIDENCE:]
    explicit["score"], explicit["weight"] = round(explicit["score"], 4), round(explicit["weight"], 4)
    state["explicit"] = explicit
    if vote is not None:
        style = dict(state.get("style") or {"score": 0.0, "messages": 0})
        n = int(style["messages"]) + 1
        style["score"] = round(style["score"] + (vote - style["score"]) / min(n, STYLE_WINDOW), 4)
        style["messages"] = n
        state["style"] = style
        if not state.get("reason"):
            state["reason"] = f"message style ({n} messages)"
    if signals or vote is not None:
        state["updated_at"] = at
    state["source"] = "observed"
    return derive(dimension, state)


def contract_observe_message(
    dimensions: dict, *, text: str, previous: str, message_id: int, at: str
) -> tuple[dict, Observation]:
    """`dimensions` after one user message (a new dict), and what the message said."""
    observation = message_signals(text, previous=previous)
    result = dict(dimensions)
    for dimension in DIMENSIONS:
        signals = [s for s in observation.signals if s.dimension == dimension]
        vote = observation.style.get(dimension)
        if not signals and vote is None:
            continue
        result[dimension] = dimension_apply(
            dimension, result.get(dimension), signals=signals, vote=vote, message_id=message_id, at=at
        )
    return result, observation


def person_dimension(dimension: str, value: str, *, reason: str, at: str) -> dict:
    return {
        "value": value,
        "score": score_of(dimension, value),
        "confidence": 1.0,
        "evidence": [],
        "source": "person",
        "reason": reason or "set by the person",
        "updated_at": at,
    }


def signal_count(state: dict) -> int:
    return int((state.get("explicit") or {}).get("signals", 0))


def style_count(state: dict) -> int:
    return int((state.get("style") or {}).get("messages", 0))


def is_shown(dimension: str, state: dict, *, min_confidence: float) -> bool:
    """Whether the dimension renders: a person's setting always; an observed one when it is
    confident enough and not the middle value (which asks nothing of the assistant)."""
    if state.get("source") == "person":
        return state.get("value") in DIMENSIONS[dimension]
    middle = DIMENSIONS[dimension][1]
    return float(state.get("confidence", 0.0)) >= min_confidence and state.get("value") != middle


def dimension_line(dimension: str, state: dict) -> str:
    value = state["value"]
    head = f"- {dimension}: {value} — {GUIDANCE[(dimension, value)]}"
    if state.get("source") == "person":
        return f"{head} (set by the person)"
    evidence = [f"{signal_count(state)} signals"] if signal_count(state) else []
    if style_count(state):
        evidence.append(f"style of {style_count(state)} messages")
    return f"{head} (confidence {float(state['confidence']):.1f}; {', '.join(evidence)})"


def render(dimensions: dict, *, min_confidence: float, cap: int) -> tuple[str, int]:
    """`### contract` with a line per shown dimension, the person's settings first, then the
    most confident, under `cap` tokens; and how many shown dimensions did not fit."""
    shown = [
        (name, dimensions[name])
        for name in DIMENSIONS
        if isinstance(dimensions.get(name), dict)
        and is_shown(name, dimensions[name], min_confidence=min_confidence)
    ]
    shown.sort(key=lambda item: (item[1].get("source") != "person", -float(item[1].get("confidence", 0))))
    lines: list[str] = []
    omitted = 0
    for name, state in shown:
        line = dimension_line(name, state)
        if estimate_tokens("### contract\n" + "\n".join([*lines, line])) > cap:
            omitted += 1
            continue
        lines.append(line)
    if not lines:
        return "", omitted
    return "### contract\n" + "\n".join(lines), omitted


def contract_text(*, subject, mode: Mode, config: MemoryConfig, cap: int) -> tuple[str, int]:
    """`### contract` for `subject` in `mode` under `cap` tokens, and how many dimensions did
    not fit. ("", 0) when nothing is confident enough."""
    # in SQL (`raw` still converts the JSON column): every build asks, and the ORM's compiling
    # of this one statement cost more than running it
    found = InteractionContract.objects.raw(
        f"SELECT id, dimensions FROM {InteractionContract._meta.db_table} "
        "WHERE subject_id = %s AND mode = %s ORDER BY id LIMIT 1",
        [subject.pk, mode.name],
    )
    row = next((contract.dimensions for contract in found), None)
    if not row:
        return "", 0
    return render(row, min_confidence=config["contract.minConfidence"], cap=cap)
