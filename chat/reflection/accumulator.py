"""Extracting one long message chunk by chunk (chat.reflection.chunking) as if it were read whole.

`ChunkedMessage` reads the chunks in order and carries forward what the earlier ones
established:

* the heuristic extractor's `Carry` (how the whole message is written, the story's tense);
* the speaker: the words before a chunk's first label continue the previous chunk's speaker;
* who "I" is. In a transcript with several speakers the person is the speaker who introduces
  themselves by name (or whose label is a name the profile already holds), wherever that was
  said; from then on only that speaker's statements become the person's facts, and what the
  others say is kept as notes saying who said it. Until someone is known to be the person each
  speaker's operations wait; when nobody ever is, they are all kept, as for an unchunked message;
* what was extracted: the same fact or note from two chunks is one operation, a later chunk's
  new value for a key supersedes the earlier one (a list key gathers its items, as the
  extractor's merge does within one message), and a retraction takes back what an earlier
  chunk set. For a model, `earlier()` summarises the keys and notes already taken, for the next
  chunk's prompt.

Every operation keeps pointing at the source message; `chunk` is its chunk's index (the caps
count per chunk), and a note with no date of its own is dated at its chunk's clock time when
the transcript gives one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chat.reflection.chunking import Chunk, Chunking, speaker_turns
from chat.reflection.heuristics import Carry, extract
from chat.reflection.ops import LIST_KEYS, Extraction, Operation

NAME_KEYS = ("name", "preferred_name")
EARLIER_NOTES = 40
EARLIER_NOTE_CHARS = 160


def extraction_operations(
    extraction: Extraction, message: Any, *, chunk: int = 0, at: datetime | None = None
) -> list[Operation]:
    """The heuristic extractor's findings as operations on `message`; `at` dates the notes that
    have no date of their own (None: the message's time, set when they are prepared)."""
    ops = [
        Operation(
            op="SET",
            message=message,
            key=fact.key,
            value=fact.value,
            pinned=fact.pinned,
            keywords=list(fact.keywords),
            confidence=fact.confidence,
            category=fact.category,
            chunk=chunk,
        )
        for fact in extraction.facts
    ]
    ops += [
        Operation(op="RETRACT", message=message, key=r.key, value=r.value, chunk=chunk)
        for r in extraction.retractions
    ]
    ops += [
        Operation(
            op="NOTE",
            message=message,
            content=note.content,
            tags=list(note.tags),
            occurred_at=note.occurred_at or at,
            category=note.category,
            chunk=chunk,
        )
        for note in extraction.notes
    ]
    return ops


def _note_key(content: str) -> str:
    return re.sub(r"\W+", " ", content.lower()).strip()


@dataclass(frozen=True)
class ChunkTurn:
    """A chunk shown to a model as one turn: its text, the message's role, the chunk's time."""

    text: str
    role: str
    occurred_at: datetime


class ChunkedMessage:
    def __init__(self, message: Any, chunking: Chunking, *, known_names: tuple[str, ...] = ()):
        self.message = message
        self.chunking = chunking
        self.carry = Carry.of(message.text)
        self.known = {n.split()[0].lower() for n in known_names if n.strip()}
        self.speaker: str | None = None
        self.person: str | None = None
        self.speakers: list[str] = []
        self.waiting: dict[str, list[Operation]] = {}
        self.ops: list[Operation] = []

    # --- the heuristic path ---

    def read(self, index: int, chunk: Chunk) -> None:
        """Extract the chunk's turns with the heuristic extractor, carrying state forward."""
        at = chunk.occurred_at(self.message.occurred_at)
        for turn in speaker_turns(chunk.text):
            if turn.speaker is not None:
                self.speaker = turn.speaker
                self.carry.opened = False  # a new turn opens like a message does
                if turn.speaker not in self.speakers:
                    self.speakers.append(turn.speaker)
            extraction = extract(
                turn.text,
                role=self.message.role,
                occurred_at=at or self.message.occurred_at,
                carry=self.carry,
            )
            ops = extraction_operations(extraction, self.message, chunk=index, at=at)
            self._said(self.speaker, ops)

    def _said(self, speaker: str | None, ops: list[Operation]) -> None:
        if speaker is None or speaker == self.person:
            self._take(ops)
            return
        if self.person is None and (
            speaker.split()[0].lower() in self.known or any(o.op == "SET" and o.key in NAME_KEYS for o in ops)
        ):
            self.person = speaker
            for other, waiting in self.waiting.items():
                self._take(waiting if other == speaker else self._theirs(other, waiting))
            self.waiting = {}
            self._take(ops)
            return
        if self.person is None:
            self.waiting.setdefault(speaker, []).extend(ops)
        else:
            self._take(self._theirs(speaker, ops))

    @staticmethod
    def _theirs(speaker: str, ops: list[Operation]) -> list[Operation]:
        """What someone other than the person said: no facts about the person, notes saying who."""
        notes = [o for o in ops if o.op == "NOTE"]
        for note in notes:
            note.content = f"{speaker}: {note.content}"
        return notes

    # --- the model path ---

    def turn(self, chunk: Chunk) -> ChunkTurn:
        return ChunkTurn(
            text=chunk.text,
            role=self.message.role,
            occurred_at=chunk.occurred_at(self.message.occurred_at) or self.message.occurred_at,
        )

    def take_model(self, index: int, ops: list[Operation]) -> None:
        """A model's operations on chunk `index`, moved onto the source message."""
        for op in ops:
            op.message, op.chunk = self.message, index
        self._take(ops)

    def earlier(self, index: int) -> str:
        """What the earlier chunks gave, for chunk `index`'s prompt."""
        total = len(self.chunking.chunks)
        head = f"The message is long, so it is shown in {total} parts; this is part {index + 1}."
        if not self.ops:
            return head + " Nothing was taken from the earlier parts."
        facts = [f"- {o.key}: {o.value}" for o in self.ops if o.op == "SET"]
        facts += [f"- {o.key} retracted ({o.value})" for o in self.ops if o.op == "RETRACT"]
        notes = [f"- {o.content[:EARLIER_NOTE_CHARS]}" for o in self.ops if o.op == "NOTE"][-EARLIER_NOTES:]
        return "\n".join(
            [
                head,
                "Already taken from the earlier parts (do not repeat these; set a key again only "
                "when this part changes its value):",
                "facts:",
                *(facts or ["(none)"]),
                "notes:",
                *(notes or ["(none)"]),
            ]
        )

    # --- both ---

    def _take(self, ops: list[Operation]) -> None:
        for op in ops:
            self._add(op)

    def _add(self, op: Operation) -> None:
        if op.op == "SET":
            previous = next((o for o in self.ops if o.op == "SET" and o.key == op.key), None)
            if previous is not None:
                if previous.value.lower() == op.value.lower():
                    return
                if op.key in LIST_KEYS:
                    items = {i.strip().lower(): i.strip() for i in previous.value.split(",") if i.strip()}
                    for item in (i.strip() for i in op.value.split(",")):
                        items.setdefault(item.lower(), item)
                    previous.value = ", ".join(items.values())
                    previous.keywords = list(dict.fromkeys([*previous.keywords, *op.keywords]))
                    return
                self.ops.remove(previous)  # the later statement wins, as within one message
        elif op.op == "RETRACT":
            if any(
                o.op == "RETRACT" and (o.key, o.value.lower()) == (op.key, op.value.lower()) for o in self.ops
            ):
                return
            taken_back = [
                o
                for o in self.ops
                if o.op == "SET" and o.key == op.key and (not op.value or op.value.lower() in o.value.lower())
            ]
            for o in taken_back:
                self.ops.remove(o)
        elif op.op == "NOTE":
            if any(o.op == "NOTE" and _note_key(o.content) == _note_key(op.content) for o in self.ops):
                return
        elif op.op == "EVOLVE":
            if any(
                o.op == "EVOLVE"
                and (o.note_id, o.add_tags, o.remove_tags) == (op.note_id, op.add_tags, op.remove_tags)
                for o in self.ops
            ):
                return
        self.ops.append(op)

    def operations(self) -> list[Operation]:
        """Everything taken, once the last chunk is read; what waited on a person nobody turned
        out to be is kept as an unchunked message's would be."""
        for waiting in self.waiting.values():
            self._take(waiting)
        self.waiting = {}
        return self.ops
