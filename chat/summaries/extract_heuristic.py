"""Phase 1 without a model: a conversation's raw memory read from its messages and notes.

Precision before recall. The user's own statements count; an assistant's proposal (a decision,
a fix, a list of steps, a command) counts only when the user's next message takes it up ("yes,
let's do that", "that worked"), never when it turns it down ("no, I'd rather…"). Each sentence
lands in one section at most. Notes reflection took from the conversation count by their kind
tag (decision, plan, …) or, untagged, by the same sentence rules.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from datetime import datetime

from chat.reflection.text import expand, negated_before, read_sentence
from chat.reflection.words import is_verb, verb_lemma
from chat.summaries import phrasing
from chat.summaries.blocks import SECTIONS, Extraction, failure_item, slug, workflow_item
from chat.summaries.tools import commands_in, tool_names
from chat.summaries.turns import LIST_LINE, Turn, read_turns, success_removed
from memory.temporal import ground
from memory.text import FILLER_WORDS, query_terms, split_sentences, stem_overlap

I = re.IGNORECASE  # noqa: E741
MAX_ITEMS = 12
NO_FIX = "no fix was found in this conversation"

# --- sentence rules --------------------------------------------------------------------------
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|possibly|thinking (?:about|of)|considering|not sure|unsure|what if|if we|"
    r"should we|could we|or should|wonder|wondering|for now|for the time being|leaning towards?|tempted)\b",
    I,
)
_DECISION = re.compile(
    r"\b(?:(?:we|I) (?:will|are going to|am going to|are|am) (?:go(?:ing)? with|use|using|stick(?:ing)? with|"
    r"switch(?:ing)? (?:over )?to|mov(?:e|ing) to|keep|keeping|stay(?:ing)? (?:with|on)|adopt|drop|dropping|"
    r"replace|replacing)|"
    r"(?:we|I) (?:have )?(?:decided|settled on|switched (?:over )?to|went with|chose|opted for|picked|agreed (?:on|to)|"
    r"moved (?:over )?to)|"
    r"let(?:'s| us) (?:go with|use|stick with|switch to|move to|keep|stay (?:with|on)|adopt|drop)|"
    r"decided (?:to|on|that|against)|the decision (?:is|was)|(?:going forward|from now on),? (?:we|I)|"
    # present-tense commitments: "we switch to X", "we stay on Y", "I will go with Z"
    r"(?:we|I) (?:will |are |am )?(?:now )?(?:switch(?:ing)? (?:over )?to|stay(?:ing)? (?:with|on)|stick(?:ing)? with|"
    r"go(?:ing)? with|settle on|move over to)|"
    r"(?:that|this) settles it|(?:it|that) is decided|\w+ it is(?=\W*$)|"
    r"(?:the|our|this) [\w-]+(?: [\w-]+)? (?:stays|remains|stay|remain)(?: as it is| as is| where it is| put)?(?=\W*$|,| and\b)|"
    r"(?:we|I) (?:are|am) (?:now )?(?:using|going to use|going to order|going to book|going to buy))\b",
    I,
)
_OPTION_PICK = re.compile(
    r"\b(?:go(?:ing)? with|take|pick|choose|use|prefer|want|do)\s+(?:the\s+)?(?:option\s+)?"
    r"(?P<which>\d|one|two|three|four|first|second|third|fourth|last|[A-Z][\w.+-]*)\b",
)
_ORDINALS = {"1": 0, "one": 0, "first": 0, "2": 1, "two": 1, "second": 1, "3": 2, "three": 2, "third": 2}
_ORDINALS |= {"4": 3, "four": 3, "fourth": 3, "last": -1}
_CONSTRAINT = re.compile(
    r"\b(?:must(?: not)?|has to|have to|needs? to (?:stay|remain|run|work|support|be)|cannot|not allowed|"
    r"(?<!I )never|no (?:more|fewer|less|later) than|at (?:least|most) \$?\d|(?:under|below|within) \$?\d|"
    r"deadline|due (?:by|on)|by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|the end of|"
    r"end of|next week)|budget|pinned|pin (?:it |\w+ )?(?:to|at)|stuck on|only (?:runs?|works?|supports?)|"
    r"requires?|required|mandatory|compatible with|"
    r"(?:hard|strict|firm|golden|house) (?:rule|limit|ceiling|cap|deadline|requirement)|ceiling|non-negotiable|no exceptions|"
    r"constraint|capped (?:at|to)|limited to|(?:max|maximum|min|minimum|up to|at the latest) \$?\d|"
    r"SLA|(?:ready|done|finished|delivered|in place) by|by \d{1,2}(?::\d\d)?\s*(?:am|pm|utc)|"
    r"(?:will not|would not|refuses? to|cannot) (?:raise|move|change|allow|increase|accept|approve|upgrade)|"
    r"nothing (?:\w+ ){0,4}(?:other than|except|more than|longer than|over)|[\w.]+-only|"
    r"(?:is|are) load[- ]bearing)\b",
    I,
)
_NOT_CONSTRAINT = re.compile(
    r"\bcannot (?:get|figure|find|seem|believe|wait|remember|see|reproduce|tell|work out|thank)\b|"
    r"\bI (?:must|have to) (?:go|leave|run|head off|say|admit|sleep|dash|get going)\b|\bnever mind\b|\bhave to (?:say|admit)\b",
    I,
)
_FAILURE = re.compile(
    r"\b(?:[A-Z]\w*(?:Error|Exception)|Traceback|errors?|exception|fails?|failed|failing|failure|"
    r"crash(?:es|ed|ing)?|broken|breaks|broke|(?:does|do|did|is|are) not (?:work|working|start|build|compile|run|load)|"
    r"not working|will not (?:start|build|compile|run|load|connect)|cannot (?:connect|import|find|load|open|resolve)|"
    r"segfaults?|hangs|timed? out|times out|stack trace|panic(?:ked)?|exit(?:ed)? (?:code|status) [1-9]|"
    r"dies|died|killed|OOM|out of memory|(?:is|went|turned) red|new problem|(?:the|a) (?:problem|bug|issue) (?:is|with)|"
    r"still (?:says|shows|reports|returns|points)|"
    r"(?:does|do|did|will) not (?:come off|go away|come out|show up|update|change|sync|save|match|arrive|fit|drain|dry|stick|hold)|"
    r"[45]\d\d (?:error|response))\b"
)
_NOT_FAILURE = re.compile(
    r"\berror (?:handling|messages? format|budget)\b|\b(?:without|no|zero) (?:errors|failures)\b|\bfail(?:-safe|over| fast)\b",
    I,
)
_ERROR_LINE = re.compile(
    r"^(?:[\w.]*(?:Error|Exception)\b.*|Traceback \(most recent call last\):|(?:E|FATAL|ERROR):?\s.+)$"
)
_FIX_SAID = re.compile(
    r"\b(?:fixed (?:it |this |that )?by|the fix (?:was|is)|solved (?:it |this )?by|resolved (?:it |this )?by|"
    r"turned out (?:to be|that|the)|the (?:problem|issue|culprit|cause) was|it was because|"
    r"works (?:now )?(?:after|once)|got it working by|the trick was)\b",
    I,
)
_SUGGESTION = re.compile(
    r"^(?:try|run|add|set|use|install|upgrade|downgrade|pin|remove|delete|change|rename|replace|move|update|"
    r"restart|clear|export|pass|wrap|call|enable|disable|switch|bump|increase|reduce|point)\b|"
    r"\bthe user (?:needs|should|can|could|has) to\b|\b(?:the )?fix is\b|\bthe assistant would (?:suggest|recommend)\b|"
    r"\bmake sure\b|\bthe user should\b",
    I,
)
_PROPOSAL = re.compile(
    r"\b(?:I would (?:suggest|recommend|go with|use)|I suggest|I recommend|(?:you|we) (?:should|could) (?:use|go with|switch to|try|move to)|"
    r"my recommendation is|the best option is|I would pick)\b",
    I,
)
_PREFERENCE = re.compile(
    r"\b(?:I (?:prefer|would rather|would prefer|like it when|want you to|need you to)|"
    r"please,? (?:(?:when|if) [^,]{3,60}, )?(?:always|never|do not|keep|use|answer|reply|write|give|show|stop|just|send)|"
    r"I (?:really |honestly )?(?:do not|never) want (?:to (?:hear|see|get|read)|you to|any)|"
    r"I (?:really |honestly )?(?:hate|love|cannot stand|dislike|like|want) (?!to\b|you\b|it\b|this\b|that\b)(?:the |my |a |an |some )?[\w-]+ [\w-]+|"
    r"(?:house|my|our) style (?:is|for)|"
    r"^(?:always|never) (?:use|give|show|answer|reply|write|include|add|explain|ask|suggest)|"
    r"(?:do not|never) \w+(?: \w+){0,6} again\b|^stop \w+ing\b|keep (?:it|answers|replies|responses) (?:short|brief|concise)|"
    r"I (?:like|love|hate|dislike) (?:it when you|when you|your answers|short|concise|detailed)|"
    r"(?:from now on|going forward|in (?:the )?future),? (?:please )?(?:always |never )?(?:use|give|answer|reply|write|show|do not|keep))",
    I,
)
_OPEN = re.compile(
    r"\b(?:TODO|still (?:need|have) to|need to (?:figure out|decide|check|look into|find out)|"
    r"have not (?:decided|figured out|found out)|not sure (?:yet )?(?:whether|if|how|which)|open question|next time|"
    r"come back to|revisit|follow up on|(?:do not|did not) know (?:yet )?(?:if|whether|how|which|what)|(?:need|have) to ask|"
    r"(?:cannot|could not|can not) decide|undecided|(?:not|never) (?:been )?decided|sleep on it|leave it (?:for now|open)|"
    r"(?:still|yet to be) (?:open|undecided|unclear|unknown)|(?:look into|deal with|handle|check|fix|add|figure out|try) (?:\w+ ){0,4}later)\b",
    I,
)
_WORKFLOW_LEAD = re.compile(
    r"\b(?:steps?|process|procedure|workflow|checklist|routine|playbook|recipe|how (?:I|we|to)|every time|whenever|"
    r"each time|before (?:I|we|each|every|a|any)|to (?:release|deploy|publish|ship|set up|install|upgrade|migrate|"
    r"rotate|back up|restore|cut))\b",
    I,
)
_RECURRING = re.compile(
    r"\b(?:every time|whenever|each time|before each|before every)\s+(?:I|we)\s+(?P<what>[^,]+?)"
    r"(?:\s*,\s*(?:I|we)?\s*|\s+(?:I|we)\s+)(?P<steps>.+)$",
    I,
)
_FIRST_THEN = re.compile(r"\bfirst\b[\s,]*(?P<steps>.+\bthen\b.+)$", I)
_STEP_SPLIT = re.compile(
    r"\s*(?:,\s*|\s+)(?:and then|then|after that|afterwards|next|finally|lastly)\s+|\s*,\s*(?:and\s+)?|\s+and\s+",
    I,
)
# "option 2", "the first one": a pick among listed options, read by _pick_option
_PICK_WORDS = re.compile(r"\boption \w+\b|\bthe (?:first|second|third|fourth|last) (?:one|option)\b", I)
# "booked the electrician", "ordered the sofa", "delivery on 3 May": a commitment already made
_COMMITTED = re.compile(
    r"\b(?:booked|ordered|bought|purchased|signed up|registered|reserved|scheduled|hired|enrolled|subscribed|"
    r"implemented|merged|rolled out)\b|\bdelivery (?:is |date |on |for )?(?:on |is )?\d",
    I,
)
# "X, no Y" / "X instead of Y": a choice made against an alternative
_CHOICE = re.compile(
    r"(?:^|,)\s*(?:so\s+)?[^,]{2,80}?,\s*(?:no|not)\s+(?!(?:sure|yet|really|bad|ideal|much|now|today|always)\b)"
    r"[\w.+`-]+(?:\s+[\w.+`-]+){0,3}\W*$|\b(?:instead of|rather than)\b",
    I,
)
# a sentence that is a ban: "no plastic in the garden", "no `eval` calls"
_BAN = re.compile(
    r"^no (?!(?:way|idea|time|luck|worries|problem|thanks|need|rush|clue|change|longer|one|matter|doubt)\b)[\w`-]+",
    I,
)
# a sentence that only continues the one before it
_CONTINUES = re.compile(
    r"^(?:so|which means|that means|because|hence|therefore)\b|\b(?:before|after|by|until) (?:that|then)\b", I
)
# a secret stated in passing: the sentence is left out whole, not just its value
_SECRETISH = re.compile(
    r"\b(?:password|passcode|passphrase|wi-?fi|pin (?:code|number|is)|lock ?box|key ?safe|keypad|alarm code|door code|"
    r"gate code|combination)\b|(?<!exit )(?<!status )(?<!error )(?<!return )\bcode (?:is )?\d{3,}",
    I,
)
_REPORT = re.compile(r"(?:did|had|was|were|done)\b", I)
_NAME_NOISE = {
    "here",
    "steps",
    "step",
    "following",
    "process",
    "usually",
    "every",
    "time",
    "whenever",
    "need",
    "run",
}


class _Collector:
    def __init__(self):
        self.sections: dict[str, list[str]] = {key: [] for key in SECTIONS}

    def add(self, key: str, item: str) -> None:
        item = phrasing.cap(item, 1200 if key == "workflows" else phrasing.ITEM_CHARS)
        if key != "tools" and _SECRETISH.search(item):
            return
        if not item or len(self.sections[key]) >= MAX_ITEMS or len(query_terms(item)) < 2:
            return
        if any(stem_overlap(item, other) >= 0.8 for other in self.sections[key]):
            return
        self.sections[key].append(item)


def _grounded(text: str, at: datetime | None) -> str:
    return ground(text, at)[0] if at else text


def _pick_option(turn: Turn, answer: str) -> str | None:
    """The item of `turn`'s option list the user's `answer` picks ("let's go with option 2")."""
    options = [items for lead, items in turn.lists if not _WORKFLOW_LEAD.search(lead)]
    if not options:
        return None
    items = options[-1]
    for m in _OPTION_PICK.finditer(expand(answer)):
        which = m.group("which")
        if which.lower() in _ORDINALS:
            index = _ORDINALS[which.lower()]
            if index < len(items):
                return items[index]
            continue
        named = [item for item in items if re.match(rf"\W*{re.escape(which)}\b", item, I)]
        if len(named) == 1:
            return named[0]
    return None


def _sentence_rules(c: _Collector, raw: str, *, role: str, at: datetime | None, accepted: bool) -> str | None:
    """File one sentence under the first section whose rule it meets; returns the key."""
    s = read_sentence(raw)
    text = expand(phrasing.clean(raw))
    if not text or s.greeted and len(text.split()) < 4:
        return None
    if s.question and not raw.rstrip().endswith("?") and _REPORT.match(text):
        s = replace(s, question=False)  # "did that for the car today: …" reports, it does not ask
    mine = role in ("user", "note") or accepted
    if role in ("user", "note") and _PREFERENCE.search(text) and not s.question:
        c.add("preferences", _preference(text, role))
        return "preferences"
    if (
        mine
        and not s.question
        and not s.conditional
        and not _HEDGE.search(text)
        and not _PICK_WORDS.search(text)
    ):
        m = _DECISION.search(text) or (_PROPOSAL.search(text) if role == "assistant" else None)
        if m is None and role in ("user", "note"):
            m = _COMMITTED.search(text) or _CHOICE.search(text)
        if m and not negated_before(text, m.start()):
            c.add("decisions", phrasing.standalone(_grounded(text, at), role=role))
            return "decisions"
    if (
        role in ("user", "note")
        and not s.question
        and (_CONSTRAINT.search(text) or _BAN.search(text))
        and not _NOT_CONSTRAINT.search(text)
    ):
        if not _FAILURE.search(text):
            c.add("constraints", phrasing.standalone(_grounded(text, at), role=role))
            return "constraints"
    if role in ("user", "note") and _OPEN.search(text):
        c.add("open_questions", phrasing.standalone(_grounded(text, at), role=role))
        return "open_questions"
    return None


def _preference(text: str, role: str) -> str:
    m = re.match(r"^(?:please\s+)?(?P<rest>(?:always|never|do not|stop|keep|just)\b.+)$", text, I)
    if m:
        rest = re.sub(r"^do not\b", "not", m.group("rest"), flags=I)
        rest = phrasing.user_view(rest)
        return phrasing.sentence(f"The user asks the assistant to {rest[0].lower()}{rest[1:]}")
    return phrasing.standalone(text, role=role)


def _problem(turn: Turn) -> str | None:
    """The failure a user's message reports (its most specific sentence), or None."""
    found = []
    for raw in turn.sentences:
        text = expand(phrasing.clean(raw))
        m = _FAILURE.search(text)
        if (
            m
            and not _NOT_FAILURE.search(text)
            and not negated_before(text, m.start())
            and not read_sentence(raw).conditional
        ):
            found.append(text)
    error_lines = [line.strip() for line in turn.code + turn.sentences if _ERROR_LINE.match(line.strip())]
    if not found and not error_lines:
        return None
    named = [t for t in found if re.search(r"\w(?:Error|Exception)\b", t)]
    chosen = (named + [t for t in found if t not in named])[:2]
    found = [t for t in found if t in chosen]  # in the order they were said
    problem = phrasing.cap(phrasing.standalone(" ".join(found), role="user"), 240) if found else ""
    if error_lines and error_lines[-1] not in problem:
        head = re.sub(r"\s*\b(?:(?:with|like) )?(?:this|the following|below)\W*$", "", problem.rstrip(" .:"))
        problem = f"{head} ({phrasing.cap(error_lines[-1], 160)})" if head else error_lines[-1]
    return problem


def _suggested_fix(turn: Turn) -> str | None:
    """The step an assistant's message proposes: its first suggestion, else its first command."""
    for raw in turn.sentences:
        text = phrasing.standalone(raw, role="assistant")
        if _SUGGESTION.search(text.rstrip(".")) and not text.endswith("?"):
            return text
    commands = commands_in(turn.code, turn.text)
    return f"Run `{commands[0]}`." if commands else None


_THANKS = re.compile(r"^(?:thanks|thank you|cheers|phew|nice|great|awesome|perfect)\b\W*$", I)


def _fix_reported(turn: Turn) -> str | None:
    """The user's own account of what fixed it ("moved the install after the copy, works now"),
    when it says more than that it worked: its first two sentences."""
    said = []
    for raw in turn.sentences[:2]:
        text = expand(phrasing.clean(raw))
        if _PREFERENCE.search(text) or raw.rstrip().endswith("?"):
            break  # the message has moved on to something else
        # clauses that only say it worked ("that worked", "the job is green now") are left out
        said += [c for c in re.split(r"\s*[,;]\s*", text) if len(query_terms(success_removed(c))) >= 2]
    text = ", ".join(said)
    if len(query_terms(text)) < 3:
        return None
    return phrasing.cap(phrasing.standalone(text, role="user"), 240)


def _failures(c: _Collector, turns: list[Turn]) -> None:
    open_problem: str | None = None
    for i, turn in enumerate(turns):
        if turn.role != "user":
            continue
        before = next((t for t in reversed(turns[:i]) if t.role == "assistant"), None)
        said = next((s for s in turn.sentences if _FIX_SAID.search(expand(s))), None)
        if open_problem and said:
            c.add("failures", failure_item(open_problem, phrasing.standalone(said, role="user")))
            open_problem = None
            continue
        if open_problem and before is not None and before.reply == "worked":
            fix = _fix_reported(turn) or _suggested_fix(before)
            if fix:
                c.add("failures", failure_item(open_problem, fix))
                open_problem = None
                continue
        if open_problem and before is not None and before.reply == "failed":
            continue  # the same failure, still open
        problem = _problem(turn)
        if problem:
            if open_problem:
                c.add("failures", failure_item(open_problem, NO_FIX))
            open_problem = problem
    if open_problem:
        c.add("failures", failure_item(open_problem, NO_FIX))


# what a procedure is for, in the words around it: "the release procedure", "a routine for adding
# a migration", "before every order", "how do I ship this", "doing the upgrade the usual way"
_TOPIC = (
    re.compile(
        r"\b(?:the|our|a|my|this|that|your) (?:\w+ )?(?P<n>[\w-]+(?: [\w-]+)?) (?:procedure|routine|process|workflow|checklist|playbook|recipe)\b",
        I,
    ),
    re.compile(
        r"\b(?:procedure|routine|process|workflow|checklist|steps?|way|playbook|recipe) (?:for|to|of) (?P<n>[\w-]+(?: (?:a|an|the|one|new) [\w-]+| [\w-]+)?)",
        I,
    ),
    re.compile(r"\bbefore (?:every|each|any|an?|the|placing an?|making an?) (?P<n>[\w-]+)", I),
    re.compile(
        r"\b(?:do(?:ing)?|run(?:ning)?|did) the (?P<n>[\w-]+) (?:the usual way|as usual|the same way|like last time)",
        I,
    ),
    re.compile(r"\b(?P<n>[\w-]+(?: (?:a|an|the) [\w-]+)?) (?:the usual way|as usual|the same way as)", I),
    re.compile(r"\bhow (?:do|should|can|would) (?:I|we) (?P<n>[\w-]+(?: (?:a|an|the) [\w-]+)?)", I),
    re.compile(r"\b(?:now|about to|going to|time to) (?P<n>\w+ing)\b", I),
)
_PURPOSE = re.compile(r"^(?:to|for|when) \w+", I)  # "To rotate the API token:" names itself
_GENERIC = {
    "this",
    "that",
    "it",
    "things",
    "stuff",
    "one",
    "same",
    "sane",
    "safe",
    "usual",
    "new",
    "way",
    "thing",
}


def _topic(text: str) -> str:
    """The one or two words a procedure is for, named in `text`, or ""."""
    text = expand(phrasing.clean(text or ""))
    for pattern in _TOPIC:
        for m in pattern.finditer(text):
            words = [w.lower() for w in re.findall(r"[A-Za-z][\w-]*", m.group("n"))]
            words = [verb_lemma(w) or w if w.endswith("ing") else w for w in words]
            words = [w for w in words if w not in _GENERIC and w not in FILLER_WORDS and w not in _NAME_NOISE]
            if words:
                return " ".join(words[:3])
    return ""


def _workflow_name(lead: str, steps: list[str], context: tuple[str, ...] = ()) -> str:
    terms = [t for t in query_terms(expand(lead)) if t not in _NAME_NOISE and not t.isdigit()]
    if not (_PURPOSE.match(phrasing.clean(lead)) and terms):
        topic = _topic(lead) or next((t for t in map(_topic, context) if t), "")
        if topic:
            return slug(topic) or "workflow"
    if not terms:
        terms = [t for t in query_terms(steps[0]) if not t.isdigit()]
    return slug(" ".join(terms[:3])) or "workflow"


def _workflow(c: _Collector, lead: str, items: list[str], context: tuple[str, ...] = ()) -> None:
    steps = [phrasing.imperative(item) for item in items]
    steps = [s.replace("|", "/") for s in steps if len(query_terms(s)) >= 1][:8]
    if len(steps) >= 2:
        c.add("workflows", workflow_item(_workflow_name(lead, steps, context), steps))


def _imperative_start(item: str) -> bool:
    """Whether a step opens with a verb or a command ("run the suite", "`make check`")."""
    text = phrasing.imperative(item)
    if text.startswith("`"):
        return True
    first = re.match(r"[A-Za-z]+", text)
    if not first:
        return False
    word = first.group(0).lower()
    return is_verb(word) and (verb_lemma(word) or word) == word


def _looks_procedural(lead: str, items: list[str]) -> bool:
    if _WORKFLOW_LEAD.search(lead) or _ROUTINE.search(lead):
        return True
    return sum(map(_imperative_start, items)) * 2 >= len(items) + 1


# "same as always:", "the usual routine:" — an assistant recalling a procedure already in use
_ROUTINE = re.compile(
    r"\b(?:same (?:as (?:always|usual|before|last time)|routine|steps|procedure|process)|as (?:always|usual)|"
    r"the usual (?:way|routine|steps)|(?:a|the) (?:routine|procedure|checklist))\b",
    I,
)


def _clauses(body: str) -> list[str]:
    """`body` cut at its commas and "then"s, but not inside parentheses or backticks."""
    parts, depth, tick, current = [], 0, False, ""
    for ch in body:
        if ch == "`":
            tick = not tick
        elif ch == "(" and not tick:
            depth += 1
        elif ch == ")" and not tick and depth:
            depth -= 1
        if ch in ",;" and not depth and not tick:
            parts.append(current)
            current = ""
            continue
        current += ch
    parts.append(current)
    steps = []
    for part in parts:
        part = re.sub(r"^\s*(?:and\s+)?(?:then\s+)?", "", part.strip(), flags=I)
        steps += [p for p in re.split(r"\s+(?:and )?then\s+(?![^(]*\))", part) if p.strip()]
    return [s.strip().rstrip(".") for s in steps if len(s.split()) >= 2 or s.strip().startswith("`")]


def _inline_steps(raw: str) -> tuple[str, list[str]] | None:
    """An assistant sentence that spells out a procedure after a colon ("Same as always: bump the
    version, run the checks, tag it, then deploy"): (lead, steps), or None."""
    lead, colon, body = " ".join(raw.split()).partition(":")
    lead = phrasing.clean(lead)
    if not colon or len(lead.split()) > 12:
        return None
    steps = _clauses(body)
    if len(steps) < 3:
        return None
    if not (_ROUTINE.search(lead) or _WORKFLOW_LEAD.search(lead) or _looks_procedural("", steps)):
        return None
    return lead, steps


def _inline_workflow(c: _Collector, raw: str) -> bool:
    text = expand(phrasing.clean(raw)).rstrip(".!")
    m = _RECURRING.search(text)
    if m:
        name, body = m.group("what"), m.group("steps")
    else:
        m = _FIRST_THEN.search(text)
        if not m:
            return False
        name, body = text[: m.start()], m.group("steps")
    steps = [s for s in _STEP_SPLIT.split(body) if s and len(s.split()) >= 2]
    if len(steps) < 2:
        return False
    _workflow(c, name, steps)
    return True


def heuristic_extract(*, messages, notes) -> Extraction:
    """The Extraction of a conversation read by rules (method "heuristic")."""
    turns = read_turns(messages)
    c = _Collector()
    _failures(c, turns)
    commands: list[str] = []
    names: list[str] = []
    for i, turn in enumerate(turns):
        accepted = turn.role == "assistant" and turn.reply in ("accepted", "worked")
        context = (
            next((t.text for t in turns[i + 1 :] if t.role == "user"), ""),
            next((t.text for t in reversed(turns[:i]) if t.role == "user"), ""),
        )
        if turn.role == "assistant" and turn.reply != "rejected":
            answer = context[0]
            # a procedure the assistant spelled out is the user's unless they turned it down
            for lead, items in turn.lists:
                if not accepted and _looks_procedural(lead, items):
                    _workflow(c, lead, items, context)
            for raw in turn.sentences:
                inline = None if LIST_LINE.match(raw) else _inline_steps(raw)
                if inline:
                    _workflow(c, inline[0], inline[1], context)
            picked = _pick_option(turn, answer)
            if picked:
                picked = phrasing.cap(phrasing.clean(picked), 200).rstrip(".")
                c.add("decisions", f"The user chose {picked} from the options the assistant listed.")
                names += tool_names(picked)
        if turn.role == "user" or accepted:
            commands += commands_in(turn.code, turn.text)
            names += tool_names(turn.text)
            for lead, items in turn.lists:
                if _looks_procedural(lead, items):
                    _workflow(c, lead, items, context)
        for raw in _joined(turn.sentences):
            if LIST_LINE.match(raw) and turn.role == "assistant":
                continue
            if turn.role == "user" and _inline_workflow(c, raw):
                continue
            _sentence_rules(c, raw, role=turn.role, at=turn.at, accepted=accepted)
    _notes(c, notes)
    _open_ending(c, turns)
    _tools(c, commands, names)
    title = phrasing.title_from(
        [s for t in turns if t.role == "user" for s in t.sentences],
        [t for t, _ in Counter(w for t in turns for w in query_terms(t.text, limit=200)).most_common(5)],
    )
    return Extraction(
        title=title, synopsis=phrasing.synopsis(title, c.sections), sections=c.sections, method="heuristic"
    )


def _joined(sentences: list[str]) -> list[str]:
    """Sentences with each one that only continues the previous ("so nothing newer", "usable
    before that") joined to it; list lines stay apart."""
    out: list[str] = []
    for raw in sentences:
        text = phrasing.clean(raw)
        continues = _CONTINUES.search(text) or _CONTINUES.search(raw.strip())
        if out and not LIST_LINE.match(raw) and not LIST_LINE.match(out[-1]) and continues:
            out[-1] = f"{out[-1].rstrip()} {raw.strip()}"
            continue
        out.append(raw)
    return out


def _tools(c: _Collector, commands: list[str], names: list[str]) -> None:
    """Commands in backticks, then the names no command already starts with."""
    items = [f"`{command}`" for command in dict.fromkeys(commands)]
    firsts = {command.split()[0].lower().lstrip("./") for command in commands}
    items += [name for name in dict.fromkeys(names) if name.lower() not in firsts]
    c.sections["tools"] = list(dict.fromkeys(c.sections["tools"] + items))[:MAX_ITEMS]


_NOTE_KINDS = {
    "decision": "decisions", "decisions": "decisions", "constraint": "constraints", "requirement": "constraints",
    "rule": "constraints", "preference": "preferences", "tool": "tools", "tools": "tools", "plan": "open_questions",
    "todo": "open_questions", "question": "open_questions", "pitfall": "failures", "bug": "failures",
}  # fmt: skip


def _notes(c: _Collector, notes) -> None:
    for note in notes:
        content = phrasing.cap(phrasing.clean(note.content))
        kind = next((_NOTE_KINDS[t] for t in (note.tags or []) if t in _NOTE_KINDS), None)
        if kind == "failures":
            problem, *fix = re.split(r"\s*\b(?:fix|fixed by|solution):\s*", content, maxsplit=1, flags=I)
            c.add("failures", failure_item(problem, fix[0] if fix else NO_FIX))
        elif kind:
            c.add(kind, phrasing.sentence(content))
        else:
            for raw in split_sentences(content):
                _sentence_rules(c, raw, role="note", at=note.occurred_at, accepted=True)


def _open_ending(c: _Collector, turns: list[Turn]) -> None:
    """The user's questions in a last message that got no answer."""
    if not turns or turns[-1].role != "user":
        return
    for raw in turns[-1].sentences:
        if raw.rstrip().endswith("?") and len(query_terms(raw)) >= 2:
            c.add("open_questions", phrasing.standalone(_grounded(raw, turns[-1].at), role="user"))
