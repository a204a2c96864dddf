"""Phase 2 without a model: a scope's extractions merged into MEMORY.md, memory_summary.md and
skills by rules alone (chat.summaries.compose falls back to this).

Merging, section by section, newest extraction first:

- near-duplicates (Jaccard of content words ≥ DUPLICATE) are one item, the newest wording
  kept and the older conversations counted ("+2 earlier");
- two decisions (or preferences) about the same thing with different choices — the same
  subject words before the same verb ("Tests use …"), overlapping but different objects —
  keep the newer one, marked "(replaces an earlier decision)";
- an open question a later conversation decided or fixed (most of its words in a later
  decision, constraint or fix) is dropped;
- a failure reported again keeps the newest wording and any fix either report had.

Skills: one per workflow that recurs (the same name, or nearly the same steps, in two or more
conversations) or that was spelled out with at least MIN_EXPLICIT_STEPS steps; the newest
version's steps, pitfalls from the failures that share words with it. Everything is ordered by
the extractions' order and the blocks' item order, never by a set's, so the same extractions
give byte-identical documents.
"""

from dataclasses import dataclass, field
from datetime import UTC

from chat.summaries.blocks import (
    Composition,
    Skill,
    failure_parse,
    parse_block,
    slug,
    workflow_parse,
)
from memory.documents import MEMORY_MD, NAME, document_url, skill_path
from memory.text import TOKEN_RE, jaccard, stems, word_set
from memory.tokens import estimate_tokens, truncate_to_tokens

METHOD = "heuristic"
DUPLICATE = 0.6  # word-set Jaccard at which two items say the same thing
SAME_FAILURE = 0.5
SAME_STEPS = 0.6
SAME_STEPS_CONTAINED = 0.5  # the share of the shorter version's step words the longer one holds
MIN_EXPLICIT_STEPS = 3
SUMMARY_TOKENS = 1000  # the summary's own budget, well below summaryInjectionTokenLimit
SYNOPSIS_TOKENS = 60
MAX_PITFALLS = 5
PITFALL_OVERLAP = 0.3  # the share of a failure's words a workflow must have for it to be a pitfall
TITLE_CHARS = 60

# verbs a decision turns on: "Tests use a fresh directory", "The API stays on v2"
PIVOTS = frozenset(
    """use uses using is are was be stays stay go goes switch switches switched move moves moved
    adopt adopts adopted prefer prefers preferred keep keeps run runs deploy deploys store
    stores live lives target targets become becomes replace replaces pick picks picked""".split()
)
# words that introduce a decision without saying what it is about
LEAD_INS = frozenset(
    """decided decide decision decisions agreed agree settled chose choose chosen team now
    henceforth onwards from""".split()
)
CONFLICTING = ("decisions", "preferences")


@dataclass(frozen=True)
class Source:
    index: int  # 0 = the newest extraction
    date: str
    title: str
    conversation_id: int


@dataclass
class Item:
    section: str
    text: str
    source: Source
    words: set[str]
    sources: list[int] = field(default_factory=list)  # indices of every extraction saying it
    replaces: bool = False
    fix: str = ""  # failures only

    @property
    def earlier(self) -> int:
        return len(self.sources) - 1


@dataclass
class Workflow:
    name: str
    steps: list[str]
    source: Source
    step_words: set[str]
    sources: list[int] = field(default_factory=list)
    skill: str = ""  # the skill's name when it became one


def _sources(extractions) -> list[Source]:
    sources = []
    for index, extraction in enumerate(extractions):
        when = extraction.last_message_at
        date = when.astimezone(UTC).date().isoformat() if when else ""
        title = " ".join((extraction.title or "").split()) or f"conversation {extraction.conversation_id}"
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1].rstrip() + "…"
        sources.append(Source(index, date, title, extraction.conversation_id))
    return sources


def _pivot_split(text: str) -> tuple[str, set[str], set[str]] | None:
    """(pivot verb, subject words before it, object words after it), or None without a pivot."""
    tokens = TOKEN_RE.findall(text.lower())
    for position, token in enumerate(tokens):
        if token in PIVOTS:
            subject = word_set(" ".join(tokens[:position])) - LEAD_INS
            return token, subject, word_set(" ".join(tokens[position + 1 :]))
    return None


def _conflicts(newer: Item, older: Item) -> bool:
    """Two items choosing differently about the same thing ("Tests use a shared directory" /
    "Tests use a fresh temporary directory")."""
    a, b = _pivot_split(newer.text), _pivot_split(older.text)
    if a is None or b is None or a[0] != b[0] or a[1] != b[1]:
        return False
    if a[2] == b[2] or not a[2] & b[2]:
        return False
    # with subject words ("Tests use …") one shared object word is enough; without them the
    # objects alone must say it is the same thing ("use Postgres for billing" / "use MySQL …")
    return bool(a[1]) or jaccard(a[2], b[2]) >= 0.3


def _merge_plain(section: str, entries: list[tuple[str, Source]]) -> list[Item]:
    kept: list[Item] = []
    for text, source in entries:
        item = Item(section, text, source, word_set(text), [source.index])
        same = next((k for k in kept if jaccard(k.words, item.words) >= DUPLICATE), None)
        if same is not None:
            if source.index not in same.sources:
                same.sources.append(source.index)
            continue
        if section in CONFLICTING:
            rival = next(
                (k for k in kept if k.source.index < source.index and _conflicts(k, item)),
                None,
            )
            if rival is not None:
                rival.replaces = True
                continue
        kept.append(item)
    return kept


def _merge_failures(entries: list[tuple[str, Source]]) -> list[Item]:
    kept: list[Item] = []
    for text, source in entries:
        problem, fix = failure_parse(text)
        item = Item("failures", problem, source, word_set(problem), [source.index], fix=fix)
        same = next((k for k in kept if jaccard(k.words, item.words) >= SAME_FAILURE), None)
        if same is not None:
            if source.index not in same.sources:
                same.sources.append(source.index)
            same.fix = same.fix or fix
            continue
        kept.append(item)
    return kept


def _answered(question: Item, settled: list[Item]) -> bool:
    """Whether a later conversation's decision, constraint or fix covers the question."""
    if not question.words:
        return False
    for item in settled:
        if item.source.index >= question.source.index:
            continue
        words = item.words | word_set(item.fix)
        shared = question.words & words
        if len(shared) >= 2 and len(shared) / len(question.words) >= 0.5:
            return True
    return False


def _merge_workflows(entries: list[tuple[str, Source]]) -> tuple[list[Workflow], list[Item]]:
    """Named workflows grouped by name or by nearly the same steps; loose lines as plain items."""
    groups: list[Workflow] = []
    loose: list[tuple[str, Source]] = []
    for text, source in entries:
        parsed = workflow_parse(text)
        if parsed is None:
            loose.append((text, source))
            continue
        name, steps = parsed
        words = word_set(" ".join(steps))
        group = next((g for g in groups if g.name == name or _same_steps(g.step_words, words)), None)
        if group is None:
            groups.append(Workflow(name, steps, source, words, [source.index]))
            continue
        if source.index not in group.sources:
            group.sources.append(source.index)
        # the fullest version: a later recap ("same as always: …") abbreviates the procedure
        if len(steps) >= 2 and (len(group.steps) < 2 or len(" ".join(steps)) > len(" ".join(group.steps))):
            group.steps = steps
        group.step_words |= words
    return groups, _merge_plain("workflows", loose)


def _same_steps(a: set[str], b: set[str]) -> bool:
    """Nearly the same steps: most of the shorter version's words are in the other."""
    if not a or not b:
        return False
    return jaccard(a, b) >= SAME_STEPS or len(a & b) / min(len(a), len(b)) >= SAME_STEPS_CONTAINED


def _skills(workflows: list[Workflow], failures: list[Item], max_skills: int) -> list[Skill]:
    candidates = [
        w
        for w in workflows
        if len(w.steps) >= 2 and (len(w.sources) >= 2 or len(w.steps) >= MIN_EXPLICIT_STEPS)
    ]
    candidates.sort(key=lambda w: (-len(w.sources), w.source.index))
    skills: list[Skill] = []
    names: set[str] = set()
    for workflow in candidates[:max_skills]:
        base = slug(workflow.name, limit=56)
        if not NAME.match(base or ""):
            base = "workflow"
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.add(name)
        workflow.skill = name
        own = stems(workflow.name.replace("-", " ") + " " + " ".join(workflow.steps))
        pitfalls = []
        for failure in failures:
            problem = stems(failure.text)
            shared = own & problem
            if len(shared) >= 2 and len(shared) >= PITFALL_OVERLAP * len(problem):
                pitfalls.append(_failure_text(failure))
            if len(pitfalls) >= MAX_PITFALLS:
                break
        seen = len(workflow.sources)
        times = "once" if seen == 1 else f"in {seen} conversations"
        description = (
            f"Use for {workflow.name.replace('-', ' ')}: worked through {times}, "
            f"most recently in “{workflow.source.title}” ({workflow.source.date})."
        )
        skills.append(
            Skill(name=name, description=description, steps=list(workflow.steps), pitfalls=pitfalls)
        )
    return skills


def _failure_text(item: Item) -> str:
    return f"{item.text} Fix: {item.fix}" if item.fix else item.text


def _provenance(source: Source, earlier: int) -> str:
    more = f"; +{earlier} earlier" if earlier else ""
    return f"({source.date}, “{source.title}”{more})"


# --- MEMORY.md --------------------------------------------------------------------------------

MEMORY_SECTIONS = (
    ("decisions", "Decisions"),
    ("constraints", "Constraints"),
    ("failures", "Known failures and fixes"),
    ("workflows", "Workflows"),
    ("tools", "Tools"),
    ("preferences", "Preferences"),
    ("open_questions", "Open questions"),
    ("sessions", "Sessions"),
)
DROP_ORDER = {key: n for n, (key, _) in enumerate(reversed(MEMORY_SECTIONS))}


@dataclass
class Line:
    section: str
    text: str
    age: int  # the extraction's index: the higher, the older, the sooner dropped


def _memory_lines(
    merged: dict[str, list[Item]], workflows: list[Workflow], sources, scope: str
) -> list[Line]:
    lines: list[Line] = []
    for key, _ in MEMORY_SECTIONS:
        if key == "workflows":
            for workflow in workflows:
                where = _provenance(workflow.source, len(workflow.sources) - 1)
                text = f"{workflow.name}: {'; '.join(workflow.steps)}"
                if workflow.skill:
                    text += f" (skill: {document_url(scope, skill_path(workflow.skill))})"
                text += f" {where}"
                lines.append(Line(key, text, workflow.source.index))
        if key == "sessions":
            continue
        for item in merged.get(key, []):
            text = _failure_text(item) if key == "failures" else item.text
            text = f"{text} {_provenance(item.source, item.earlier)}"
            if item.replaces:
                text += f" (replaces an earlier {'decision' if key == 'decisions' else 'preference'})"
            lines.append(Line(key, text, item.source.index))
    for source, synopsis in sources:
        text = f"{source.date} — {source.title}"
        if synopsis:
            text += f": {truncate_to_tokens(' '.join(synopsis.split()), SYNOPSIS_TOKENS)}"
        lines.append(Line("sessions", text, source.index))
    return lines


def _memory_render(lines: list[Line], *, scope: str, header: str, left_out: int) -> str:
    parts = [f"# Memory: {scope}" if scope else "# Memory", "", header]
    for key, heading in MEMORY_SECTIONS:
        items = [line.text for line in lines if line.section == key]
        if items:
            parts += ["", f"## {heading}", *(f"- {text}" for text in items)]
    if left_out:
        parts += [
            "",
            f"_{left_out} older item{'s' if left_out != 1 else ''} left out to stay within the budget._",
        ]
    return "\n".join(parts) + "\n"


def _memory_md(lines: list[Line], *, scope: str, header: str, budget: int) -> str:
    """MEMORY.md within `budget` tokens: the oldest lines dropped first."""
    text = _memory_render(lines, scope=scope, header=header, left_out=0)
    if estimate_tokens(text) <= budget:
        return text
    order = sorted(range(len(lines)), key=lambda i: (-lines[i].age, DROP_ORDER[lines[i].section], -i))
    dropped: set[int] = set()
    chars = len(text)
    note = 80  # room for the "left out" line
    for i in order:
        if (chars + note + 3) / 4 <= budget:
            break
        dropped.add(i)
        chars -= len(lines[i].text) + 3  # "- " and the newline
    while True:
        kept = [line for i, line in enumerate(lines) if i not in dropped]
        text = _memory_render(kept, scope=scope, header=header, left_out=len(dropped))
        if estimate_tokens(text) <= budget or len(dropped) == len(lines):
            return text if estimate_tokens(text) <= budget else truncate_to_tokens(text, budget)
        dropped.add(next(i for i in order if i not in dropped))


# --- memory_summary.md ------------------------------------------------------------------------

SUMMARY_SECTIONS = (
    ("constraints", "Constraints"),
    ("decisions", "Decisions"),
    ("failures", "Known failures and fixes"),
    ("preferences", "Preferences"),
    ("skills", "Skills"),
    ("open_questions", "Open questions"),
)
STEP_WORDS = 8  # a step as the summary lists it


def _short_steps(steps: list[str]) -> str:
    short = []
    for step in steps:
        words = step.rstrip(".").split()
        short.append(" ".join(words[:STEP_WORDS]) + ("…" if len(words) > STEP_WORDS else ""))
    return "; ".join(short)


def _summary_md(merged: dict[str, list[Item]], skills: list[Skill], *, scope: str, budget: int) -> str:
    """The items most likely to change what the next session does, newest first, taken in
    turns from each section while they fit `budget` tokens."""
    candidates: dict[str, list[str]] = {
        "constraints": [f"{i.text} ({i.source.date})" for i in merged["constraints"]],
        "decisions": [f"{i.text} ({i.source.date})" for i in merged["decisions"]],
        "failures": [f"{_failure_text(i)} ({i.source.date})" for i in merged["failures"] if i.fix],
        "preferences": [f"{i.text} ({i.source.date})" for i in merged["preferences"]],
        "skills": [
            f"{s.name} ({document_url(scope, skill_path(s.name))}): {_short_steps(s.steps)}" for s in skills
        ],
        "open_questions": [f"{i.text} ({i.source.date})" for i in merged.get("open_questions", [])],
    }
    title = f"# Memory summary: {scope}" if scope else "# Memory summary"
    footer = f"Full memory: {document_url(scope, MEMORY_MD)}"
    chosen: dict[str, list[str]] = {key: [] for key, _ in SUMMARY_SECTIONS}
    used = estimate_tokens(f"{title}\n\n{footer}\n")
    full: set[str] = set()
    depth = 0
    while len(full) < len(SUMMARY_SECTIONS):
        for key, heading in SUMMARY_SECTIONS:
            if key in full:
                continue
            if depth >= len(candidates[key]):
                full.add(key)
                continue
            line = f"- {truncate_to_tokens(candidates[key][depth], 120 if key == 'skills' else 80)}\n"
            cost = estimate_tokens(line) + (0 if chosen[key] else estimate_tokens(f"\n## {heading}\n"))
            if used + cost > budget:
                full.add(key)
                continue
            chosen[key].append(line.rstrip("\n"))
            used += cost
        depth += 1
    parts = [title]
    for key, heading in SUMMARY_SECTIONS:
        if chosen[key]:
            parts += ["", f"## {heading}", *chosen[key]]
    if not any(chosen.values()):
        parts += ["", "Nothing durable recorded yet."]
    parts += ["", footer]
    return "\n".join(parts) + "\n"


# --- the whole composition --------------------------------------------------------------------


def heuristic_compose(*, scope: str, extractions, config) -> Composition:
    sources = _sources(extractions)
    entries: dict[str, list[tuple[str, Source]]] = {}
    for extraction, source in zip(extractions, sources, strict=True):
        for key, items in parse_block(extraction.raw_memory).items():
            entries.setdefault(key, []).extend((item, source) for item in items)
    merged: dict[str, list[Item]] = {}
    for key in ("decisions", "constraints", "tools", "preferences"):
        merged[key] = _merge_plain(key, entries.get(key, []))
    merged["failures"] = _merge_failures(entries.get("failures", []))
    workflows, merged["workflows"] = _merge_workflows(entries.get("workflows", []))
    settled = merged["decisions"] + merged["constraints"] + [f for f in merged["failures"] if f.fix]
    merged["open_questions"] = [
        q
        for q in _merge_plain("open_questions", entries.get("open_questions", []))
        if not _answered(q, settled)
    ]
    skills = _skills(workflows, merged["failures"], config["memories.maxSkills"])

    dates = [s.date for s in sources if s.date]
    span = f", {min(dates)} to {max(dates)}" if dates else ""
    count = len(sources)
    header = (
        f"_Distilled from {count} conversation{'s' if count != 1 else ''}{span} (heuristic). "
        "Advice about the past, not a record of the present: check before relying on it._"
    )
    lines = _memory_lines(
        merged, workflows, [(s, e.synopsis) for s, e in zip(sources, extractions, strict=True)], scope
    )
    memory_md = _memory_md(lines, scope=scope, header=header, budget=config["memories.memoryMaxTokens"])
    budget = min(config["memories.summaryInjectionTokenLimit"], SUMMARY_TOKENS)
    summary_md = _summary_md(merged, skills, scope=scope, budget=budget)
    return Composition(memory_md=memory_md, summary_md=summary_md, skills=skills, method=METHOD)
