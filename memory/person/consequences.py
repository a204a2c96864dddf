"""Consequence chains (issue 13 req. 5): advice given (action) → what came of it (outcome) →
what that says about this person's setting (tendency).

Pure reading of text, offline (the LLM path is memory/person/consequence_llm.py):

- `outcome_report(text)`: does the person's message report how earlier advice turned out?
  Phrase lexicons of failure reports ("that broke the build", "didn't help", "made it worse")
  and success reports ("it worked, thanks", "fixed it", "all green"), a failure cue negated
  just before it ("didn't break anything") not counting.
- `action_gist(advice)`: the advice in short — the assistant turn's first sentence that tells
  the person to do something (an action verb or a command), else its first sentence.
- `tendency_of(action, report, outcome)`: what the outcome says, by the kind of change the
  advice asked for (sweeping, dependency, configuration, destructive data, restart, …), e.g.
  a sweeping change that broke something → "fragile to sweeping changes".
- `loop_signals(text)`: is the person stuck ("still failing", "same error again", "failed
  again", "back to square one")? Only then does `### consequences` render, relevant chains
  first (`consequences_text`): the same conversation, the same scope, shared words, failures.
"""

import re
from dataclasses import dataclass

from memory.config import MemoryConfig
from memory.modes import Mode
from memory.text import query_terms
from memory.tokens import estimate_tokens, truncate_to_tokens

MAX_ACTION_CHARS = 200
MAX_OUTCOME_CHARS = 200
MAX_TENDENCY_CHARS = 200
CANDIDATES = 50  # the newest chains considered for one build


def _phrases(*phrases: str) -> re.Pattern:
    """One pattern for the phrases, on word boundaries; an apostrophe is optional and any run
    of spaces may separate words."""
    alternatives = [r"[\s-]+".join(re.escape(w).replace("'", "'?") for w in p.split()) for p in phrases]
    return re.compile(r"(?<![\w'])(?:" + "|".join(alternatives) + r")(?![\w'])", re.IGNORECASE)


FAILURE = _phrases(
    "broke",
    "broken",
    "breaks",
    "it broke",
    "that broke",
    "broke the build",
    "broke everything",
    "didn't help",
    "did not help",
    "didn't work",
    "did not work",
    "doesn't work",
    "does not work",
    "no longer works",
    "stopped working",
    "made it worse",
    "makes it worse",
    "now it fails",
    "now fails",
    "now failing",
    "now crashes",
    "crashed",
    "crashes",
    "failed",
    "fails",
    "still failing",
    "still broken",
    "same error",
    "no luck",
    "no dice",
    "lost my",
    "wiped",
    "deleted my",
    "regression",
    "had to revert",
    "had to roll back",
    "reverted it",
    "rolled it back",
    "red again",
    "tests fail",
    "build is red",
    "ci is red",
)
SUCCESS = _phrases(
    "it worked",
    "that worked",
    "worked perfectly",
    "worked great",
    "worked fine",
    "worked like a charm",
    "worked, thanks",
    "works now",
    "it works",
    "working now",
    "fixed it",
    "that fixed it",
    "that fixed",
    "fixed the",
    "solved it",
    "that solved",
    "problem solved",
    "that did it",
    "did the trick",
    "all green",
    "tests pass",
    "tests are passing",
    "build passes",
    "build is green",
    "that helped",
    "it helped",
    "sorted it",
    "nailed it",
)
NEGATION = re.compile(r"(?:\bnot|\bnever|\bno|n't|\bwithout|\bnothing)\W+(?:\w+\W+){0,2}$", re.IGNORECASE)
# a report looks back at what was tried: "that", "it", "your fix", "the change", "I tried"
BACK_REFERENCE = _phrases(
    "that",
    "it",
    "this",
    "your",
    "the fix",
    "the change",
    "the suggestion",
    "the command",
    "tried",
    "ran",
    "applied",
    "did",
    "now",
    "still",
    "thanks",
    "thank you",
)
LOOP = _phrases(
    "still failing",
    "still fails",
    "still broken",
    "still crashing",
    "still crashes",
    "still doesn't work",
    "still does not work",
    "still not working",
    "still getting",
    "still seeing",
    "still the same",
    "still red",
    "same error",
    "same problem",
    "same issue",
    "same failure",
    "same thing again",
    "keeps failing",
    "keeps crashing",
    "keeps happening",
    "back to square one",
    "going in circles",
    "didn't help",
    "did not help",
    "no luck",
    "nothing changed",
    "not fixed",
    "i'm stuck",
    "still stuck",
)
AGAIN = re.compile(r"\b(?:fail\w*|broke\w*|break\w*|crash\w*|error\w*|red|down)\s+again\b", re.IGNORECASE)
LOOP_WORDS = frozenset(
    "still failing fails fail failed broken crashing crashes same error errors problem issue again "
    "keeps happening stuck circles luck nothing changed fixed help".split()
)

ACTION_VERBS = (
    "run|change|update|upgrade|downgrade|install|uninstall|add|remove|delete|drop|replace|rename|"
    "refactor|rewrite|reformat|move|set|unset|enable|disable|switch|use|try|restart|reboot|clear|"
    "reset|revert|pin|bump|migrate|edit|wrap|split|merge|rebase|squash|increase|decrease|lower|"
    "raise|configure|export|import|call|apply|check|deploy|create|mount|patch|comment out"
)
IMPERATIVE = re.compile(
    rf"^(?:(?:first|then|next|now|just|simply|so|ok|okay|finally|also)\W+)*(?:you\s+(?:can|could|should|need\s+to|might)\s+|"
    rf"(?:i'?d|i\s+would)\s+(?:suggest|recommend)\s+(?:you\s+)?|try\s+to\s+|let'?s\s+|please\s+)?(?:{ACTION_VERBS})\b",
    re.IGNORECASE,
)
COMMAND = re.compile(r"`[^`\n]{2,120}`|^\s*\$\s+\S.*$", re.MULTILINE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _clean(text: str, limit: int) -> str:
    text = " ".join((text or "").split()).strip(" -*•:")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _matches(pattern: re.Pattern, text: str) -> list[re.Match]:
    """The matches of `pattern` not negated just before them ("didn't break anything")."""
    return [
        m for m in pattern.finditer(text) if not NEGATION.search(text[max(0, m.start() - 40) : m.start()])
    ]


@dataclass(frozen=True)
class Report:
    outcome: str  # "success" | "failure"
    outcome_text: str  # the person's words, in short
    cues: tuple[str, ...]
    confidence: float


def outcome_report(text: str) -> Report | None:
    """The outcome the message reports of earlier advice, or None when it reports none. A
    failure cue wins over a success cue ("it worked, but now the build is red")."""
    if not text or not BACK_REFERENCE.search(text):
        return None
    failures, successes = _matches(FAILURE, text), _matches(SUCCESS, text)
    if not failures and not successes:
        return None
    outcome = "failure" if failures else "success"
    cues = tuple(dict.fromkeys(m.group(0).lower() for m in (failures or successes)))
    first = (failures or successes)[0]
    sentence = next(
        (s for s in SENTENCE.split(text) if first.group(0).lower() in s.lower()),
        text,
    )
    strong = any(len(c.split()) > 1 for c in cues)  # a phrase, not one loose word
    return Report(outcome, _clean(sentence, MAX_OUTCOME_CHARS), cues, 0.7 if strong else 0.55)


def action_gist(advice: str) -> str:
    """The advice in short: its first sentence that tells the person to do something (an action
    verb or a command), else its first sentence; "" when there is nothing to go on."""
    sentences = [s.strip() for s in SENTENCE.split(advice or "") if s.strip()]
    for sentence in sentences:
        bare = re.sub(r"^(?:\d+[.)]|[-*•])\s*", "", sentence)
        if IMPERATIVE.search(bare) or COMMAND.search(bare):
            return _clean(bare, MAX_ACTION_CHARS)
    return _clean(sentences[0], MAX_ACTION_CHARS) if sentences else ""


def is_advice(text: str) -> bool:
    """Whether an assistant turn asks the person to do something at all."""
    sentences = [re.sub(r"^(?:\d+[.)]|[-*•])\s*", "", s.strip()) for s in SENTENCE.split(text or "")]
    return any(IMPERATIVE.search(s) or COMMAND.search(s) for s in sentences if s)


# the kind of change the advice asked for → what a failure, and what a success, says
KINDS: tuple[tuple[str, re.Pattern, str, str], ...] = (
    (
        "sweeping",
        _phrases(
            "all",
            "every",
            "everywhere",
            "whole",
            "entire",
            "across",
            "global",
            "globally",
            "bulk",
            "mass",
            "rewrite",
            "refactor",
            "reformat",
            "restructure",
            "replace all",
            "find and replace",
            "sed -i",
            "codemod",
            "at once",
        ),
        "fragile to sweeping changes: prefer small, targeted edits one at a time",
        "broad changes have gone through cleanly here",
    ),
    (
        "destructive",
        _phrases(
            "delete", "drop", "truncate", "wipe", "rm -rf", "purge", "reset --hard", "force push", "--force"
        ),
        "destructive operations have cost data here: back up first, prefer reversible steps",
        "clean-slate operations have been safe here",
    ),
    (
        "dependency",
        _phrases(
            "upgrade",
            "downgrade",
            "update",
            "bump",
            "install",
            "pip install",
            "npm install",
            "version",
            "dependency",
        ),
        "fragile to dependency changes: pin versions and change one package at a time",
        "dependency updates have gone smoothly here",
    ),
    (
        "configuration",
        _phrases(
            "config",
            "configuration",
            "setting",
            "settings",
            "environment variable",
            "env var",
            "flag",
            ".env",
        ),
        "sensitive to configuration changes: change one setting at a time and keep the old value",
        "configuration changes have worked here",
    ),
    (
        "restart",
        _phrases("restart", "reboot", "clear the cache", "clear cache", "reinstall", "rebuild"),
        "restarting or rebuilding does not fix problems here: look for the cause",
        "a restart or rebuild has fixed problems here",
    ),
)


def tendency_of(*, action: str, report: str, outcome: str) -> str:
    """What the outcome of `action` says about this setting (heuristic, by the kind of change
    the advice asked for); a plain statement of what failed or held otherwise."""
    for _name, pattern, on_failure, on_success in KINDS:
        if pattern.search(action):
            return on_failure if outcome == "failure" else on_success
    gist = _clean(action, 80)
    if outcome == "failure":
        return f'advice like "{gist}" did not hold here: try a different approach'
    return f'advice like "{gist}" works in this setup'


def loop_signals(text: str) -> list[str]:
    """The failure or loop signals of the person's current message ([] when calm)."""
    found = [m.group(0).lower() for m in _matches(LOOP, text or "")]
    found += [m.group(0).lower() for m in AGAIN.finditer(text or "")]
    return list(dict.fromkeys(found))


# --- rendering --------------------------------------------------------------------------------


def _relevance(chain, *, conversation, terms: set[str]) -> tuple[float, bool]:
    """How relevant `chain` is to the build, and whether it is relevant at all (the same
    conversation, the same scope, or words in common with the message)."""
    same_conversation = conversation is not None and chain.conversation_id == conversation.pk
    same_scope = bool(conversation is not None and conversation.scope and chain.scope == conversation.scope)
    shared = len(terms & set(query_terms(f"{chain.action} {chain.outcome_text} {chain.tendency}")))
    score = 3.0 * same_conversation + 1.5 * same_scope + 1.0 * shared + 1.0 * (chain.outcome == "failure")
    return score + 0.5 * chain.confidence, same_conversation or same_scope or shared > 0


def chain_line(chain) -> str:
    outcome = "failed" if chain.outcome == "failure" else "worked"
    line = (
        f'- earlier advice "{chain.action}" {outcome} ({chain.created_at:%Y-%m-%d}): "{chain.outcome_text}"'
    )
    if chain.tendency:
        line += f"; tendency: {chain.tendency}"
    return line


def consequences_text(
    *, subject, conversation, message: str, mode: Mode, config: MemoryConfig, cap: int
) -> tuple[str, list[int], int]:
    """`### consequences` when `message` shows failure or loop signals: the text, the ids of
    the chains it shows (the builder marks them surfaced when it records) and how many did not
    fit. ("", [], 0) otherwise — without a query for a calm message."""
    if cap <= 0 or not loop_signals(message):
        return "", [], 0
    from memory.models import Consequence

    conversation_scope = conversation.scope if conversation is not None else ""
    terms = set(query_terms(message)) - LOOP_WORDS
    chains = [
        c
        for c in Consequence.objects.filter(subject=subject).order_by("-created_at", "-id")[:CANDIDATES]
        if mode.scope_allowed(c.scope, conversation_scope)
    ]
    ranked = []
    for chain in chains:
        score, relevant = _relevance(chain, conversation=conversation, terms=terms)
        if relevant:
            ranked.append((score, chain))
    ranked.sort(key=lambda pair: (-pair[0], -pair[1].created_at.timestamp(), -pair[1].pk))
    limit = config["consequences.limit"]
    heading = "### consequences"
    lines: list[str] = []
    shown: list[int] = []
    for _score, chain in ranked[:limit]:
        line = chain_line(chain)
        if estimate_tokens("\n".join([heading, *lines, line])) > cap:
            room = cap - estimate_tokens("\n".join([heading, *lines])) - 1
            if not lines and room > 10:  # one chain, cut to fit, rather than none
                lines.append(truncate_to_tokens(line, room))
                shown.append(chain.pk)
            break
        lines.append(line)
        shown.append(chain.pk)
    if not lines:
        return "", [], len(ranked)
    return "\n".join([heading, *lines]), shown, len(ranked) - len(shown)
