"""A conversation as phase 1 reads it: each message cut into prose sentences, code lines and
lists, and, for each assistant message, how the user's next message answered it (took it up,
turned it down, said it worked or that it did not). Pure functions over strings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from chat.reflection.text import expand, normalise
from memory.text import split_sentences

I = re.IGNORECASE  # noqa: E741

_FAILED = re.compile(
    r"\b(?:did not|does not|do not|not|never|still not)\s+(?:\w+\s+)?(?:work|works|working|fix|fixed|help|helped|solve)\b|"
    r"\bsame (?:error|problem|issue|thing)\b|\bstill (?:fails|failing|broken|get|getting|see|seeing|crash\w*|the same|says|shows|reports|returns)\b|"
    r"\bmade it worse\b|\bno luck\b|\bno change\b",
    I,
)
_WORKED = re.compile(
    r"\b(?:that|this|it|which|the \w+)\s+(?:worked|works|fixed it|did it|did the trick|solved it)\b|"
    r"(?<!not )(?<!never )\b(?:worked|did the trick|did it|fixed it|solved it)\b|"
    r"\b(?:works|working|passes|passing|green|gone|builds?|runs?|clean) (?:now|again)\b|\bfixed(?: it| now)?\b|\bthat was it\b|"
    r"\bproblem solved\b|\bsorted\b|\b(?:is|are|came back|turned) (?:green|clean|fixed|resolved)\b|"
    r"\b(?:says|shows|reports|returns|reads) [\w.:/-]+(?: [\w.:/-]+){0,2} now\b|"
    r"\b(?:went|ran|came out|looks?|both|all) (?:fine|well|ok|okay|clean|green)\b|"
    r"\b(?:passed|passes|pass),? (?:and )?\w|\b\w+ (?:fine|passed),",
    I,
)
_REJECT = re.compile(
    r"^(?:no|nope|nah)\b|\brather not\b|\bwould rather\b|\binstead\b|\bnot (?:an option|possible|going to|for us)\b|"
    r"\blet us not\b|\b(?:do|does) not want\b|\bcannot use\b|\bnot allowed\b|\bprefer not\b|\bnot a fan\b|"
    r"\bnot sure about (?:that|this)\b|\bskip (?:that|it|this)\b|\bno thanks\b|\bwould not\b",
    I,
)
_ACCEPT = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok|okay|alright|great|perfect|excellent|agreed|deal|exactly|done|good|nice|right|"
    r"confirmed|will do)\b|"
    r"\b(?:sounds|looks) (?:good|great|right|fine|perfect)\b|\bwe will (?:do|go with|use|try) (?:that|it|this|them)\b|"
    r"\bgo (?:with|for) it\b|\bthat works\b|\bmakes sense\b|\bgood (?:idea|call|plan)\b|\bwill do\b|\bdo it\b|"
    r"\bship it\b|\bthat is (?:the plan|what we will do)\b|"
    # the user reports having followed it: "did exactly that", "followed the steps", "with exactly that"
    r"\b(?:did|done|followed|tried|used|went through) (?:exactly |just )?(?:that|this|it|those|these|them|the (?:steps|routine|"
    r"procedure|process|list|checklist|plan))\b|\bexactly (?:that|this|as you said)\b|\bas you (?:said|suggested)\b|"
    r"\b(?:writing|write|wrote|noting|noted) (?:this|that|it) down\b|\b(?:from now on|going forward)\b",
    I,
)


def reaction(text: str) -> str | None:
    """How a user's message answers the assistant's: "failed", "worked", "rejected", "accepted"
    or None. Only the opening of the message is read."""
    sentences = split_sentences(expand(normalise(text)))
    head = " ".join(sentences[:2])[:300]
    if _FAILED.search(head):
        return "failed"
    if _WORKED.search(" ".join(sentences[:3])[:400]):
        return "worked"
    if _REJECT.search(head):
        return "rejected"
    if _ACCEPT.search(head):
        return "accepted"
    return None


def success_removed(text: str) -> str:
    """`text` without its words saying that something worked ("did it", "is green again")."""
    return _WORKED.sub(" ", text)


LIST_LINE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(?P<item>.+)$")


@dataclass
class Turn:
    role: str  # "user", "assistant" or "note"
    text: str
    at: datetime | None
    sentences: list[str] = field(default_factory=list)  # prose, one per sentence or line
    code: list[str] = field(default_factory=list)  # lines inside ``` fences
    lists: list[tuple[str, list[str]]] = field(default_factory=list)  # (lead, items) of each list
    reply: str | None = None  # the user's reaction to this assistant message


def read_turn(role: str, text: str, at: datetime | None) -> Turn:
    turn = Turn(role=role, text=text, at=at)
    for i, part in enumerate(re.split(r"^\s*```[^\n]*$", text or "", flags=re.M)):
        if i % 2:
            turn.code += [line.rstrip() for line in part.splitlines() if line.strip()]
            continue
        lead, items = "", []
        for line in part.splitlines():
            m = LIST_LINE.match(line)
            if m:
                items.append(m.group("item").strip())
                continue
            if not line.strip():
                continue
            if len(items) >= 2:
                turn.lists.append((lead, items))
            lead, items = line.strip(), []
        if len(items) >= 2:
            turn.lists.append((lead, items))
        turn.sentences += split_sentences(normalise(part))
    return turn


def read_turns(messages) -> list[Turn]:
    turns = [read_turn(m.role, m.text, m.occurred_at) for m in messages]
    for i, turn in enumerate(turns):
        if turn.role == "assistant":
            nxt = next((t for t in turns[i + 1 :] if t.role == "user"), None)
            turn.reply = reaction(nxt.text) if nxt else None
    return turns
