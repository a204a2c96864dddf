"""Two-level chunking of a long message before extraction (`chunking.*`).

A pasted voice transcript or chat log is far longer than the turns the extractors were written
for, so a message longer than `chunking.thresholdChars` is extracted chunk by chunk
(chat.reflection.accumulator carries what earlier chunks established).

Level 0 is rule-based: the message is cut at its natural boundaries — timestamps at a line's
start ("[00:12:34]", "00:12", "12:34 PM"), speaker turns ("Name:", "NAME:", chat-log lines
"[10:02] alice: …" and "alice — 10:02"), section breaks (blank-line runs, "---", "***",
Markdown headings) and bracketed annotations ("[laughter]", "(inaudible)") opening a line.
When the message has structural boundaries (timestamps, turns, sections) only those cut it,
and a paragraph or annotation cuts only inside a piece that is still too long. Pieces are
packed in order up to `thresholdChars`; a chunk shorter than `minSegmentChars` takes its
neighbours. The chunks are consecutive spans: joined, they give back the message.

Level 1 cuts a chunk still over `chunking.maxSegmentTokens` (memory.tokens' estimate):
numbered markers are placed every ~`markerEveryTokens` tokens at the nearest sentence or line
end, and the `llm.chunking` model is asked which markers are semantic cut points. Its answer
must name known markers, in order, leaving every piece under the limit; when there is no model,
it fails, or its answer is invalid, the chunk is cut at the markers by size alone (logged and
counted as `chunking.fallback.<reason>`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from memory.text import sentence_breaks
from memory.tokens import estimate_tokens
from memoryweb.counters import counter_add
from memoryweb.llm import client_for, prompt_schema

logger = logging.getLogger(__name__)

_CLOCK = r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?[AaPp]\.?[Mm]\.?)?"
_CLOCK_PARTS = re.compile(r"(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?(?:\s?(?P<ampm>[AaPp])\.?[Mm]\.?)?")
_STAMP = re.compile(rf"^[ \t]*(?:\[(?P<b>{_CLOCK})\]|\((?P<p>{_CLOCK})\)|(?P<t>{_CLOCK})(?=[\s\]:,-]|$))")
_NAME = r"[A-Z][\w.'-]*(?:[ \t][A-Z0-9][\w.'-]*){0,2}"
# "DANA: …", "Dr. Reyes: …", after an optional timestamp: "[00:01:10] DANA: …", "[10:02] alice: …"
_TURN = re.compile(
    rf"^[ \t]*(?:(?:\[{_CLOCK}\]|\({_CLOCK}\)|{_CLOCK})[ \t]*[-–—]?[ \t]*)?"
    rf"(?P<speaker>{_NAME}|(?<=[\]) \t])[a-z][\w.-]{{1,31}})[ \t]*:(?:[ \t]+|$)"
)
# a chat-log header: "alice — 10:02", "Bob Smith - 10:02 AM" (the message on the lines below)
_HEADER = re.compile(
    rf"^[ \t]*(?P<speaker>[\w.'-]{{1,32}}(?:[ \t][\w.'-]+){{0,2}})[ \t]+[-–—][ \t]+{_CLOCK}[ \t]*$"
)
_BREAK = re.compile(r"^[ \t]*(?:-{3,}|\*{3,}|_{3,}|={3,})[ \t]*$|^#{1,6}[ \t]+\S")
_ANNOTATION = re.compile(r"^[ \t]*[\[(][a-z][a-z ,'-]{2,40}[\])]")
_ANNOTATION_ANYWHERE = re.compile(r"[\[(][a-z][a-z ,'-]{2,40}[\])]")
# "Note: …", "PS: …" open a line like a speaker but are not one
NOT_SPEAKERS = frozenset(
    "note notes ps p.s edit update re subject summary tl;dr tldr todo warning important question answer "
    "action actions agenda date time location attendees participants speakers topic example step".split()
)

STRUCTURAL = 2  # timestamps, speaker turns, section breaks
PARAGRAPH = 1  # a blank-line run, an annotation opening a line


@dataclass(frozen=True)
class Chunk:
    start: int  # offset in the message
    end: int
    text: str
    level: int  # 0: cut at natural boundaries; 1: cut further at markers
    clock: time | None = None  # the transcript's clock time at the chunk's first timestamp

    def occurred_at(self, message_time: datetime) -> datetime | None:
        """The chunk's time on the message's day (the day before when that clock time is later
        than the message); None when the transcript gives no clock time here."""
        if self.clock is None:
            return None
        at = message_time.replace(
            hour=self.clock.hour, minute=self.clock.minute, second=self.clock.second, microsecond=0
        )
        return at - timedelta(days=1) if at > message_time else at


@dataclass
class Chunking:
    chunks: list[Chunk]
    level: int = 0  # the deepest level used
    fallback: str = ""  # why level 1 cut by size ("" when it did not, or the model's cuts held)
    model_cuts: int = 0  # level-1 cuts the model chose

    def stats(self) -> dict:
        return {"chunks": len(self.chunks), "level": self.level, "fallback": self.fallback}


@dataclass(frozen=True)
class Turn:
    speaker: str | None  # None: the words continue the previous chunk's speaker (or there is none)
    text: str  # without its timestamps, speaker label and bracketed annotations


# --- level 0 ---------------------------------------------------------------------------------


def _speaker(line: str) -> str | None:
    found = _TURN.match(line) or _HEADER.match(line)
    if not found:
        return None
    speaker = found["speaker"].strip()
    if speaker.lower().rstrip(".") in NOT_SPEAKERS or len(speaker) > 40:
        return None
    return speaker


def _boundaries(text: str) -> list[tuple[int, int]]:
    """(offset, strength) of every line start where a natural boundary begins a new piece."""
    found: list[tuple[int, int]] = []
    offset, blank_before = 0, False
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        if offset and bare:
            if _STAMP.match(line) or _speaker(line) or _BREAK.match(line):
                found.append((offset, STRUCTURAL))
            elif blank_before or _ANNOTATION.match(line):
                found.append((offset, PARAGRAPH))
        elif offset and _BREAK.match(line):
            found.append((offset, STRUCTURAL))
        blank_before = not bare
        offset += len(line)
    return found


def _pieces(text: str, threshold: int) -> list[tuple[int, int]]:
    bounds = _boundaries(text)
    strong = [o for o, s in bounds if s >= STRUCTURAL]
    cuts = strong or [o for o, _ in bounds]
    edges = [0, *cuts, len(text)]
    pieces = [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]
    if not strong:
        return pieces
    weak = [o for o, s in bounds if s < STRUCTURAL]
    out: list[tuple[int, int]] = []
    for a, b in pieces:
        if b - a <= threshold:
            out.append((a, b))
            continue
        inner = [a, *(o for o in weak if a < o < b), b]
        out += list(zip(inner, inner[1:], strict=False))
    return out


def _packed(pieces: list[tuple[int, int]], *, threshold: int, minimum: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for a, b in pieces:
        if spans and (spans[-1][1] - spans[-1][0] < minimum or b - spans[-1][0] <= threshold):
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    if len(spans) > 1 and spans[-1][1] - spans[-1][0] < minimum:
        last = spans.pop()
        spans[-1] = (spans[-1][0], last[1])
    return spans


def _clock(match: re.Match) -> time | None:
    parts = _CLOCK_PARTS.match(match["b"] or match["p"] or match["t"])
    if parts is None:
        return None
    hour, minute, second = int(parts["h"]), int(parts["m"]), int(parts["s"] or 0)
    if parts["ampm"]:
        if hour > 12:
            return None
        hour = hour % 12 + (12 if parts["ampm"].lower() == "p" else 0)
    return time(hour, minute, second)


def _clocks(text: str) -> list[tuple[int, time]]:
    """(offset, clock time) of the timestamps opening lines, when they are clock times. A
    transcript whose first timestamp is 00:… counts the recording's elapsed time: those say
    nothing about when it was said, so it has none."""
    stamps = []
    offset = 0
    for line in text.splitlines(keepends=True):
        if found := _STAMP.match(line):
            stamps.append((offset, found))
        offset += len(line)
    if not stamps:
        return []
    first = stamps[0][1]
    if not re.search(r"[AaPp]\.?[Mm]", first[0]) and (first["b"] or first["p"] or first["t"]).startswith(
        ("00:", "0:")
    ):
        return []
    return [(o, c) for o, m in stamps if (c := _clock(m)) is not None]


# --- level 1 ---------------------------------------------------------------------------------


def _markers(text: str, a: int, b: int, every_tokens: int) -> list[int]:
    """Offsets in `text[a:b]` every ~`every_tokens` tokens, each moved to the nearest sentence
    or line end (else the nearest space)."""
    segment = text[a:b]
    ends = [end for _, end in sentence_breaks(segment)]
    step = max(every_tokens * 4, 1)
    markers: list[int] = []
    target = step
    while target < len(segment) - step // 4:
        low = markers[-1] if markers else 0
        window = [e for e in ends if low < e < len(segment) and abs(e - target) <= step // 2]
        if window:
            cut = min(window, key=lambda e: abs(e - target))
        else:
            space = segment.rfind(" ", low + 1, target + 1)
            cut = space + 1 if space > low else target
        markers.append(cut)
        target = cut + step
    return [a + m for m in markers]


def _within(edges: list[int], limit: int, text: str) -> bool:
    return all(estimate_tokens(text[x:y]) <= limit for x, y in zip(edges, edges[1:], strict=False))


def _size_cuts(text: str, a: int, b: int, markers: list[int], limit: int) -> list[int]:
    """The last marker before each piece would pass `limit` tokens (deterministic)."""
    cuts: list[int] = []
    start = a
    for index, marker in enumerate(markers):
        following = markers[index + 1] if index + 1 < len(markers) else b
        if estimate_tokens(text[start:following]) > limit:
            cuts.append(marker)
            start = marker
    return cuts


def _model_cuts(
    client, text: str, a: int, b: int, markers: list[int], limit: int
) -> tuple[list[int] | None, str]:
    """The markers the model picks, or None and why its answer cannot be used."""
    edges = [a, *markers, b]
    shown = "".join(
        f"{text[x:y]}" + (f" ⟦{i}⟧ " if i <= len(markers) else "")
        for i, (x, y) in enumerate(zip(edges, edges[1:], strict=False), 1)
    )
    answer = client.complete_json(
        component="chunking",
        prompt="chunking",
        variables={"text": shown, "markers": len(markers), "max_tokens": limit},
        schema=prompt_schema("chunking"),
    )
    if answer is None:
        return None, "model failed"
    cuts = answer.get("cuts")
    if not isinstance(cuts, list) or not cuts:
        return None, "invalid answer: no cuts"
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in cuts):
        return None, "invalid answer: a cut is not a marker number"
    if any(not 1 <= c <= len(markers) for c in cuts):
        return None, "invalid answer: unknown marker"
    if any(x >= y for x, y in zip(cuts, cuts[1:], strict=False)):
        return None, "invalid answer: markers out of order"
    chosen = [markers[c - 1] for c in cuts]
    if not _within([a, *chosen, b], limit, text):
        return None, "invalid answer: a chunk over maxSegmentTokens"
    return chosen, ""


# --- the whole message -----------------------------------------------------------------------


def message_chunks(text: str, *, config) -> Chunking | None:
    """The chunks of a message longer than `chunking.thresholdChars`; None when it is short
    enough to extract whole or chunking is off. May ask the `llm.chunking` model (level 1)."""
    if not config["chunking.enabled"] or len(text) <= config["chunking.thresholdChars"]:
        return None
    threshold, minimum = config["chunking.thresholdChars"], config["chunking.minSegmentChars"]
    limit, every = config["chunking.maxSegmentTokens"], config["chunking.markerEveryTokens"]
    spans = _packed(_pieces(text, threshold), threshold=threshold, minimum=minimum)
    result = Chunking(chunks=[])
    levels: list[tuple[int, int, int]] = []
    client = None
    for a, b in spans:
        if estimate_tokens(text[a:b]) <= limit:
            levels.append((a, b, 0))
            continue
        markers = _markers(text, a, b, every)
        cuts: list[int] | None = None
        reason = "no model"
        if client is None:
            client = client_for("chunking", config) or False
        if client:
            cuts, reason = _model_cuts(client, text, a, b, markers, limit)
        if cuts is None:
            logger.warning(
                "chunking: a %s-token segment cut by size (%s)", estimate_tokens(text[a:b]), reason
            )
            counter_add(f"chunking.fallback.{reason.split(':')[0].replace(' ', '_')}")
            cuts = _size_cuts(text, a, b, markers, limit)
            result.fallback = result.fallback or reason
        else:
            result.model_cuts += len(cuts)
        edges = [a, *cuts, b]
        levels += [(x, y, 1) for x, y in zip(edges, edges[1:], strict=False)]
        result.level = 1
    clocks = _clocks(text)
    for a, b, level in levels:
        clock = next((c for o, c in clocks if a <= o < b), None)
        result.chunks.append(Chunk(start=a, end=b, text=text[a:b], level=level, clock=clock))
    counter_add("chunking.messages")
    counter_add("chunking.chunks", len(result.chunks))
    return result


def speaker_turns(text: str) -> list[Turn]:
    """The chunk's turns in order, each with its speaker label (None for words before the
    chunk's first label) and its words without timestamps, labels or bracketed annotations."""
    turns: list[Turn] = []
    speaker: str | None = None
    lines: list[str] = []

    def close() -> None:
        words = _ANNOTATION_ANYWHERE.sub(" ", "".join(lines))
        words = re.sub(r"[ \t]{2,}", " ", words).strip()
        if words:
            turns.append(Turn(speaker=speaker, text=words))

    for line in text.splitlines(keepends=True):
        label = _speaker(line)
        if label is not None:
            close()
            speaker, lines = label, []
            found = _TURN.match(line)
            line = line[found.end() :] if found else ""
        elif found := _STAMP.match(line):
            line = line[found.end() :].lstrip(" \t-–—:")
        lines.append(line)
    close()
    return turns
