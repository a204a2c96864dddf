"""The context builder (DESIGN §5): what the model gets for one message.

Serves the REST sidecar, the dashboard preview, the chat playground and `bench`.
Takes each kind's ranking from memory/ranking/ (every scoring rule lives there), adds the notes
linked to the ranked ones (memory/links.py, `ranked_expand`), lays each section out under its
token cap, then records a RetrievalEvent and which blocks the conversation now holds.
"""

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Case, CharField, Q, Value, When
from django.utils import timezone

from memory.beliefs import layer_of
from memory.config import MemoryConfig
from memory.context_cache import context_cache_probe, context_cache_remember, context_cache_serve
from memory.context_summary import (
    SUMMARY_MARK,
    memory_guidance,
    mental_models_text,
    summaries_on,
    summary_choose,
)
from memory.links import ranked_expand
from memory.models import (
    BeliefRevision,
    Evidence,
    EvidenceStatus,
    Lesson,
    LinkKind,
    Note,
    NoteLink,
    NoteSource,
    Procedure,
    ProfileFact,
    RevisionAction,
    Subject,
)
from memory.modes import Mode, mode_get, mode_of, policy_hash
from memory.person.consequences import consequences_text, loop_signals
from memory.person.contract import contract_text
from memory.person.state import state_text
from memory.ranking import matched_reason, rank_distilled, rank_facts, rank_notes
from memory.ranking.applicability import (
    Candidate,
    Diversity,
    breakdown,
    candidates_of,
    judge,
    note_scopes,
    policy_allows,
    selected,
)
from memory.rewriter import rewrite_query
from memory.search.lexical import NoteFilter
from memory.selectors import consent_denied_categories
from memory.services import context_deliveries_update, notes_mark_recalled, retrieval_event_record
from memory.services.consequences import consequences_mark_surfaced
from memory.services.documents import conversation_summary_pin
from memory.services.evidence import evidence_mark_recalled
from memory.text import query_terms
from memory.tokens import estimate_tokens, truncate_to_tokens
from memory.working import topics_on, topics_text, transcript_budget, transcript_on, transcript_text
from memoryweb.db import placeholders
from memoryweb.profiles import DEFAULT_PROFILE, profile_active

SECTION_ORDER = [
    "profile",
    "recalled",
    "memory-index",
    "lessons",
    "procedures",
    "mental_models",
    "contract",
    "state",
    "consequences",
    "topics",
    "transcript",
]

GUIDANCE = (
    "## Memory\n"
    "You have long-term memory about the user you are talking to. Below the conversation's "
    "memory sections come in this order: `### profile` (facts the user has told you; trust the "
    "newest), `### recalled` (earlier notes that match this message, with their date), and "
    '`### memory-index` (pointers `n:ID "gist"` to other notes that may matter). Lines marked '
    "`e:ID` are earlier turns themselves, with their date and who said them: the evidence; "
    "facts and notes are beliefs drawn from it, and a turn marked `evidence for f:ID` (or "
    "`n:ID`) is what a doubtful or contested belief rests on, so judge the belief by it. "
    "`### lessons`, `### procedures` and `<mental_models>` are summaries compressed from "
    "earlier notes: useful hints, not established fact; a fact, a note or a turn says more. "
    "Last, when present: `### topics` (what this conversation is about now, and what it set "
    "aside) and `### transcript` (its latest turns, oldest first). Use what helps with this "
    "message and ignore the rest. Do not recite memory back unless asked, and say so when "
    "memory is missing rather than guessing."
)


@dataclass
class Item:
    id: str
    kind: str
    section: str
    score: float
    reason: str
    tokens: int = 0
    expanded: bool = False
    source: dict = field(default_factory=dict)
    # the selection's scores (memory/ranking/applicability.py); `score` is their `final`
    applicability: dict = field(default_factory=dict)
    # mirror retrieval: the belief ("f:12", "n:5") whose evidence this unit is (`_mirror`)
    mirror_of: str = ""

    @property
    def layer(self) -> str:
        """evidence, belief or summary (memory/beliefs/__init__.py)."""
        return layer_of(self.kind)

    def as_dict(self) -> dict:
        data = {
            "id": self.id,
            "kind": self.kind,
            "layer": self.layer,
            "section": self.section,
            "score": round(self.score, 4),
            "reason": self.reason,
            "tokens": self.tokens,
            "expanded": self.expanded,
            "applicability": self.applicability,
        }
        if self.source:
            data["source"] = self.source
        if self.mirror_of:
            data["mirror_of"] = self.mirror_of
        return data


@dataclass
class Block:
    name: str
    text: str
    cap: int
    unchanged: bool = False
    omitted: int = 0  # matching items its caps left out (the text ends with a line saying so)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass
class Context:
    query: str
    rewritten_query: str
    stable_prefix: Block
    sections: list[Block]
    items: list[Item]
    enabled: bool = True
    retrieval_event_id: int | None = None
    latency_ms: float = 0.0
    # the session summary the stable prefix carries (memory.backend "local"): url, version, pinned
    summary: dict | None = None
    mode: str = "general_qa"
    profile: str = "normal"
    policy_hash: str = ""
    # served from the adaptive context cache (memory/context_cache.py), and how stale that build
    # was judged (0 fresh … 1); a fresh build has staleness 0
    from_cache: bool = False
    staleness: float = 0.0

    def tokens(self) -> dict[str, int]:
        tokens = {"stable_prefix": self.stable_prefix.tokens}
        tokens.update({b.name: b.tokens for b in self.sections})
        tokens["total"] = sum(tokens.values())
        return tokens

    def as_dict(self, *, full: bool = False) -> dict:
        sent = [b for b in self.sections if full or not b.unchanged]
        blocks = [self.stable_prefix, *self.sections]
        return {
            "enabled": self.enabled,
            "stable_prefix": self.stable_prefix.text if full or not self.stable_prefix.unchanged else "",
            "tail": "\n\n".join(b.text for b in sent if b.text),
            "summary": self.summary,
            "blocks": [
                {
                    "name": b.name,
                    "text": b.text if full or not b.unchanged else None,
                    "tokens": b.tokens,
                    "cap": b.cap,
                    "unchanged": b.unchanged,
                    "digest": b.digest,
                    "omitted": b.omitted,
                }
                for b in blocks
            ],
            "unchanged": all(b.unchanged for b in blocks),
            "items": [i.as_dict() for i in self.items],
            "tokens": self.tokens(),
            "query": self.query,
            "rewritten_query": self.rewritten_query,
            "retrieval_event_id": self.retrieval_event_id,
            "latency_ms": round(self.latency_ms, 3),
            "mode": self.mode,
            "profile": self.profile,
            "policy_hash": self.policy_hash,
            "from_cache": self.from_cache,
            "staleness": round(self.staleness, 4),
        }


# the summary layer's sections say what they are under their heading (memory/beliefs): what
# they hold is compressed from beliefs, never established fact
SUMMARY_SECTIONS = frozenset({"lessons", "procedures"})


def _section(name: str, lines: list[str]) -> str:
    if not lines:
        return ""
    heading = f"### {name}\n{SUMMARY_MARK}\n" if name in SUMMARY_SECTIONS else f"### {name}\n"
    return heading + "\n".join(lines)


def _fit(name: str, lines: list[str], line: str, cap: int) -> bool:
    return estimate_tokens(_section(name, [*lines, line])) <= cap


# what a section holds, for the line that says how many were left out
NOUNS = {
    "profile": "fact",
    "recalled": "note",
    "memory-index": "note",
    "lessons": "lesson",
    "procedures": "procedure",
    "mental_models": "mental model",
    "contract": "dimension",
    "state": "signal",
    "consequences": "consequence",
    "topics": "topic",
    "transcript": "turn",
}


def omitted_line(name: str, omitted: int) -> str:
    noun = NOUNS[name] + ("s" if omitted != 1 else "")
    return f"({omitted} more {noun} not shown)"


def _block(
    name: str, lines: list[str], items: list["Item"], omitted: int, cap: int
) -> tuple[Block, list["Item"]]:
    """The section as placed (`lines`, one per item of `items`), closed by a line saying how
    many items its caps left out, and the items it shows. That line is held to the cap too:
    the last placed items make room for it if they must (and count as left out); with no room
    even so, only the block's `omitted` says it."""
    lines, items = list(lines), list(items)
    while omitted and lines and not _fit(name, lines, omitted_line(name, omitted), cap):
        lines.pop()
        items.pop()
        omitted += 1
    if omitted and _fit(name, lines, omitted_line(name, omitted), cap):
        lines.append(omitted_line(name, omitted))
    return Block(name, _section(name, lines), cap, omitted=omitted), items


MAX_EXCEPTIONS = 3  # a fact's newest exceptions render beside it


def most_specific_facts(ranked: list[tuple], *, mode: str, conversation_scope: str | None) -> list[tuple]:
    """Of the facts of one key the build may show, only the most specific: one qualified by the
    build's mode (scope) wins over the unqualified one, so "answer_style: concise (mode
    coding_debug)" renders in coding_debug instead of, never beside, "answer_style: detailed"."""

    def specificity(fact) -> int:
        return 2 * bool(fact.mode and fact.mode == mode) + bool(
            fact.scope and conversation_scope is not None and fact.scope == conversation_scope
        )

    best: dict[str, int] = {}
    for fact, *_ in ranked:
        best[fact.key] = max(best.get(fact.key, 0), specificity(fact))
    return [r for r in ranked if specificity(r[0]) >= best[r[0].key]]


def fact_line(fact: ProfileFact) -> str:
    """A fact's line in `### profile`: key, value, its qualifiers and newest exceptions."""
    qualifiers = ", ".join(
        q for q in (fact.mode and f"mode {fact.mode}", fact.scope and f"scope {fact.scope}") if q
    )
    line = f"- {fact.key}: {fact.value}" + (f" ({qualifiers})" if qualifiers else "")
    if fact.exceptions:  # MARK_EXCEPTION revisions: the belief holds, but not there
        excepted = "; ".join(" ".join(e["text"].split()) for e in fact.exceptions[-MAX_EXCEPTIONS:])
        line += f" (except: {excepted})"
    return line


def profile_demand(*, subject: Subject, config: MemoryConfig) -> dict:
    """What the subject's facts ask of `### profile`'s cap (`profile.maxTokens`), written as
    the builder writes them: the tokens of the section holding every pinned fact that no
    mode or scope qualifies (those are in every context), and holding every active fact
    (a message that hit every keyword, in every mode at once: an upper bound). Parked facts
    are in no context and count nowhere. {"enabled", "cap", "always", "all", "always_count",
    "count"}."""
    facts = list(
        ProfileFact.objects.filter(subject=subject, valid_to=None, parked_at=None).order_by("key", "id")
    )
    always = [f for f in facts if f.pinned and not f.mode and not f.scope]
    return {
        "enabled": config["profile.enabled"],
        "cap": config["profile.maxTokens"],
        "always": estimate_tokens(_section("profile", [fact_line(f) for f in always])),
        "all": estimate_tokens(_section("profile", [fact_line(f) for f in facts])),
        "always_count": len(always),
        "count": len(facts),
    }


def _profile(facts: list[Candidate], config: MemoryConfig) -> tuple[Block, list[Item]]:
    """`### profile`: the selected facts, best first, each on its line, under
    `profile.maxTokens` (a near-duplicate of a placed fact is skipped)."""
    cap = config["profile.maxTokens"]
    if not config["profile.enabled"]:
        return Block("profile", "", cap), []
    lines: list[str] = []
    items: list[Item] = []
    omitted = 0
    diversity = Diversity(config)
    for candidate in facts:
        fact = candidate.obj
        if diversity.repeats(candidate.text):
            continue
        line = fact_line(fact)
        if not _fit("profile", lines, line, cap):
            omitted += 1
            continue  # a later, shorter fact may still fit
        lines.append(line)
        diversity.hold(candidate.text)
        items.append(_item(candidate, "profile", line))
    return _block("profile", lines, items, omitted, cap)


def _item(candidate: Candidate, section: str, line: str, *, reason: str = "", expanded=False) -> Item:
    """The record of one placed line: what it is, where it went, why, what it cost, and how
    its selection scored it."""
    kind, obj = candidate.kind, candidate.obj
    return Item(
        id=candidate.id,
        kind=kind,
        section=section,
        score=candidate.final,
        reason=reason or candidate.reason,
        tokens=estimate_tokens(line),
        expanded=expanded,
        source=_source(obj) if kind in ("note", "evidence") else {},
        applicability=breakdown(candidate),
    )


def note_line(note: Note) -> str:
    when = note.occurred_at or note.created_at
    return f"- [n:{note.pk} · {when:%Y-%m-%d}] {note.content}"


def evidence_line(unit: Evidence) -> str:
    return f"- [e:{unit.pk} · {unit.occurred_at:%Y-%m-%d} · {unit.role}] {unit.content}"


def _full_line(item) -> str:
    return evidence_line(item) if isinstance(item, Evidence) else note_line(item)


def _index_line(item, config: MemoryConfig) -> str:
    gist = truncate_to_tokens(" ".join(item.content.split()), config["index.gistChars"] // 4)
    if isinstance(item, Evidence):
        return f'- e:{item.pk} [{item.occurred_at:%Y-%m-%d} {item.role}] "{gist}"'
    return f'- n:{item.pk} "{gist}"'


def _kind(item) -> str:
    return "evidence" if isinstance(item, Evidence) else "note"


def _rank_notes(
    subject, query, terms, conversation, config, now, mode: Mode
) -> list[tuple[Note | Evidence, float, str]]:
    """Candidates, fusion and signals: memory/ranking/notes.py (`retrieve.mode`), over the
    scopes the mode reaches."""
    filters = NoteFilter(scopes=note_scopes(mode, conversation))
    return rank_notes(
        subject_id=subject.pk, query=query, terms=terms, filters=filters, config=config, now=now
    )


def _recalled_and_index(
    ranked: list[Candidate], config, expanded=frozenset(), mirror: "Mirror | None" = None
) -> tuple[list[Block], list[Item]]:
    """`### recalled` (the best k in full) and `### memory-index` (pointers to the next ones),
    notes and evidence units alike (one selection, best `final` first). A near-duplicate of an
    item a section holds is skipped; the items neither could take are left out, and the last of
    the two says how many. With `mirror`, the evidence of the doubtful or contested beliefs
    placed goes in after them where the caps leave room (`Mirror`)."""
    k = config["recallInjection.k"]
    recall_cap, index_cap = config["recallInjection.maxTokens"], config["index.maxTokens"]
    recalled: list[str] = []
    index: list[str] = []
    recalled_items: list[Item] = []
    index_items: list[Item] = []
    held = {"recalled": Diversity(config), "memory-index": Diversity(config)}
    skipped = 0
    for candidate in ranked:
        note, kind = candidate.obj, candidate.kind
        was_expanded = kind == "note" and note.pk in expanded
        section = "recalled" if len(recalled) < k else "memory-index"
        if held[section].repeats(candidate.text):
            skipped += 1
            continue
        if len(recalled) < k:
            line = _full_line(note)
            if not _fit("recalled", recalled, line, recall_cap):
                room = recall_cap - estimate_tokens(_section("recalled", [*recalled, ""]))
                line = truncate_to_tokens(line, room) if room >= 24 else ""
            if line:
                recalled.append(line)
                held["recalled"].hold(candidate.text)
                recalled_items.append(_item(candidate, "recalled", line, expanded=was_expanded))
                continue
        if len(index) >= config["index.limit"]:
            continue
        line = _index_line(note, config)
        if _fit("memory-index", index, line, index_cap):
            index.append(line)
            held["memory-index"].hold(candidate.text)
            index_items.append(_item(candidate, "memory-index", line, expanded=was_expanded))
    omitted = len(ranked) - len(recalled) - len(index) - skipped
    if mirror is not None:
        mirror.fetch(recalled_items + index_items)
        recalled, recalled_items = mirror.place("recalled", recalled, recalled_items, recall_cap, lead=k > 0)
        index, index_items = mirror.place(
            "memory-index", index, index_items, index_cap, lead=k == 0 and config["index.limit"] > 0
        )
    index_open = config["index.limit"] > 0
    recalled_block, recalled_items = _block(
        "recalled", recalled, recalled_items, 0 if index_open else omitted, recall_cap
    )
    index_block, index_items = _block(
        "memory-index", index, index_items, omitted if index_open else 0, index_cap
    )
    return [recalled_block, index_block], recalled_items + index_items


class Mirror:
    """Mirror retrieval (memory/beliefs/__init__.py; docs/layers.md): a placed belief — a fact
    of `### profile`, a note of the notes sections — whose confidence is under
    `beliefs.mirror.belowConfidence`, or that is contested (a `contradicts` link either way, a
    WEAKEN revision), brings the evidence units it rests on (as memory/beliefs/read.py `evidence_ids_bulk` counts them: its source
    turn, a note's other sources, the turns of its revisions) into the notes sections right
    after it: a note's after its line, a fact's first in `### recalled` (right after the
    profile). Only visible units the consent and the mode's policy let render, none already
    placed, the newest `maxEvidence` per belief (shown oldest first), each where its section's
    cap still has room (a mirror never pushes out a ranked item).

    One query for the whole build (`fetch`), none with no belief placed or mirroring off."""

    def __init__(self, *, subject, facts: list[Item], beliefs: dict[str, Any], config, allowed):
        self.subject, self.facts, self.config = subject, facts, config
        self.beliefs = beliefs  # the selected facts' and notes' objects by item id
        self.allowed = allowed  # policy_allows for this build (consent, mode, scope)
        self.shown: set[int] = set()
        self.units: dict[str, list[Evidence]] = {}

    def fetch(self, placed: list[Item]) -> None:
        """The units of the placed beliefs (the profile's facts and `placed`) worth mirroring;
        the evidence already `placed` is not shown twice."""
        self.shown |= {int(i.id[2:]) for i in placed if i.kind == "evidence"}
        config = self.config
        if not config["beliefs.mirror.enabled"] or config["beliefs.mirror.maxEvidence"] <= 0:
            return
        refs = [i.id for i in [*self.facts, *placed] if i.id in self.beliefs]
        mirrored = self._doubtful_or_contested(refs)
        whens = []
        for ref in refs:
            if ref not in mirrored:  # confident and uncontested: comes alone
                continue
            belief = self.beliefs[ref]
            kind = "fact" if isinstance(belief, ProfileFact) else "note"
            revisions = BeliefRevision.objects.filter(
                subject_id=self.subject.pk, belief_kind=kind, belief_id=belief.pk
            )
            rests_on = Q(message_id__in=revisions.exclude(message=None).values("message_id"))
            if belief.source_message_id:
                rests_on |= Q(message_id=belief.source_message_id)
            if kind == "note":
                rests_on |= Q(
                    message_id__in=NoteSource.objects.filter(note_id=belief.pk).values("message_id")
                )
            whens.append(When(rests_on, then=Value(ref)))
        if not whens:
            return
        rows = (
            Evidence.objects.filter(
                subject_id=self.subject.pk, status=EvidenceStatus.VISIBLE, archived_at=None
            )
            .annotate(mirror_of=Case(*whens, default=Value(""), output_field=CharField()))
            .exclude(mirror_of="")
            .order_by("occurred_at", "id")
        )
        units: dict[str, list[Evidence]] = {}
        for unit in rows:
            if self.allowed(unit):
                units.setdefault(unit.mirror_of, []).append(unit)
        keep = config["beliefs.mirror.maxEvidence"]
        self.units = {ref: found[-keep:] for ref, found in units.items()}

    def _doubtful_or_contested(self, refs: list[str]) -> set[str]:
        """The refs whose belief is mirrored: confidence under `beliefs.mirror.belowConfidence`,
        or contested (a WEAKEN revision; for a note, a `contradicts` link either way). A belief
        whose confidence was loaded is judged here; what the database must say (a confidence
        the ranking did not load, the revisions, the links) comes in one statement for every
        ref; the evidence query then asks only for the mirrored ones."""
        below = self.config["beliefs.mirror.belowConfidence"]
        by_key: dict[tuple[str, int], str] = {}
        doubtful: set[str] = set()
        unloaded: dict[str, list[int]] = {"note": [], "fact": []}
        for ref in refs:
            belief = self.beliefs[ref]
            kind = "fact" if isinstance(belief, ProfileFact) else "note"
            by_key[(kind, belief.pk)] = ref
            if "confidence" in belief.get_deferred_fields():
                unloaded[kind].append(belief.pk)
            elif belief.confidence < below:
                doubtful.add(ref)
        ids = {kind: [pk for k, pk in by_key if k == kind] for kind in ("note", "fact")}
        if not by_key:
            return doubtful

        # in SQL: the ORM's compiling of this UNION cost more than running it
        parts: list[str] = []
        params: list = []
        revised = [(kind, pks) for kind, pks in ids.items() if pks]
        parts.append(
            f"SELECT belief_kind, belief_id FROM {BeliefRevision._meta.db_table} "
            "WHERE subject_id = %s AND action = %s AND ("
            + " OR ".join(f"(belief_kind = %s AND belief_id IN ({placeholders(pks)}))" for _, pks in revised)
            + ")"
        )
        params += [self.subject.pk, RevisionAction.WEAKEN.value]
        for kind, pks in revised:
            params += [kind, *pks]
        if ids["note"]:
            for column in ("src_id", "dst_id"):
                parts.append(
                    f"SELECT 'note', {column} FROM {NoteLink._meta.db_table} "
                    f"WHERE kind = %s AND {column} IN ({placeholders(ids['note'])})"
                )
                params += [LinkKind.CONTRADICTS.value, *ids["note"]]
        for kind, model in (("note", Note), ("fact", ProfileFact)):
            if unloaded[kind]:
                parts.append(
                    f"SELECT '{kind}', id FROM {model._meta.db_table} "
                    f"WHERE id IN ({placeholders(unloaded[kind])}) AND confidence < %s"
                )
                params += [*unloaded[kind], below]
        with connection.cursor() as cursor:
            cursor.execute(" UNION ALL ".join(parts), params)
            rows = cursor.fetchall()
        return doubtful | {by_key[(kind, pk)] for kind, pk in rows if (kind, pk) in by_key}

    def _line(self, section: str, unit: Evidence, ref: str) -> str:
        if section == "recalled":
            return f"- [e:{unit.pk} · {unit.occurred_at:%Y-%m-%d} · {unit.role} · evidence for {ref}] {unit.content}"
        gist = truncate_to_tokens(" ".join(unit.content.split()), self.config["index.gistChars"] // 4)
        return f'- e:{unit.pk} [{unit.occurred_at:%Y-%m-%d} {unit.role}, evidence for {ref}] "{gist}"'

    def place(
        self, section: str, lines: list[str], items: list[Item], cap: int, *, lead: bool
    ) -> tuple[list[str], list[Item]]:
        """`lines` (one per item of `items`) with the mirrored units after their beliefs; with
        `lead`, the profile's facts' units first."""
        anchors: list[tuple[str | None, Item]] = [(None, f) for f in self.facts] if lead else []
        anchors += list(zip(lines, items, strict=True))
        if not any(item.id in self.units for _, item in anchors):
            return lines, items
        held = list(lines)  # what the section holds so far, for the cap (order does not count)
        out_lines: list[str] = []
        out_items: list[Item] = []
        for line, item in anchors:
            if line is not None:
                out_lines.append(line)
                out_items.append(item)
            for unit in self.units.get(item.id, []):
                if unit.pk in self.shown:
                    continue
                mirror_line = self._line(section, unit, item.id)
                if not _fit(section, held, mirror_line, cap):
                    room = cap - estimate_tokens(_section(section, [*held, ""]))
                    mirror_line = truncate_to_tokens(mirror_line, room) if room >= 24 else ""
                if not mirror_line:
                    continue
                held.append(mirror_line)
                self.shown.add(unit.pk)
                out_lines.append(mirror_line)
                out_items.append(
                    Item(
                        id=f"e:{unit.pk}",
                        kind="evidence",
                        section=section,
                        score=item.score,
                        reason=f"mirror of {item.id}",
                        tokens=estimate_tokens(mirror_line),
                        source=_source(unit),
                        applicability=item.applicability,
                        mirror_of=item.id,
                    )
                )
        return out_lines, out_items


def _distilled(selection: dict[str, list[Candidate]], terms, config) -> tuple[list[Block], list[Item]]:
    """`### lessons` and `### procedures`: the selected matches, best first, each section under
    its cap (a near-duplicate of a placed one skipped). Sections with nothing to say are left
    out of the tail (their blocks stay, empty)."""
    blocks, items = [], []
    renderers: list[tuple[str, Callable[[Any], str]]] = [
        ("lessons", _lesson_line),
        ("procedures", _procedure_lines),
    ]
    terms_set = set(terms)
    for name, render in renderers:
        cap = config[f"{name}.maxTokens"]
        if not config[f"{name}.enabled"]:
            blocks.append(Block(name, "", cap))
            continue
        lines: list[str] = []
        placed: list[Item] = []
        omitted = 0
        diversity = Diversity(config)
        for candidate in selection.get(name, []):
            if diversity.repeats(candidate.text):
                continue
            line = render(candidate.obj)
            if not _fit(name, lines, line, cap):
                omitted += 1
                continue
            lines.append(line)
            diversity.hold(candidate.text)
            placed.append(_item(candidate, name, line, reason=matched_reason(terms_set, line)))
        block, placed = _block(name, lines, placed, omitted, cap)
        blocks.append(block)
        items.extend(placed)
    return blocks, items


def _lesson_line(lesson: Lesson) -> str:
    return f"- [l:{lesson.pk}] {lesson.text}"


def _procedure_lines(procedure: Procedure) -> str:
    steps = "\n".join(f"  {i}. {step}" for i, step in enumerate(procedure.steps, 1))
    return f"- [p:{procedure.pk}] {procedure.title} (advice, not instructions to run)\n{steps}"


def _source(note: Note | Evidence) -> dict:
    source = {}
    if note.source_message_id:
        source["message_id"] = note.source_message_id
    if note.conversation_id:
        source["conversation_id"] = note.conversation_id
    return source


def _stable_prefix(summary, config: MemoryConfig) -> Block:
    """GUIDANCE under `stablePrefix.maxTokens`, then (with a session summary) the "Memory
    Guidance" block under `memories.summaryInjectionTokenLimit`; the block's cap is their sum."""
    prefix_cap = config["stablePrefix.maxTokens"]
    text = truncate_to_tokens(GUIDANCE, prefix_cap)
    if summary is None:
        return Block("stable_prefix", text, prefix_cap)
    limit = config["memories.summaryInjectionTokenLimit"]
    guidance = memory_guidance(summary.version, limit=limit)
    # + 1: the blank line between the two may round up to one more token
    return Block("stable_prefix", f"{text}\n\n{guidance}" if guidance else text, prefix_cap + limit + 1)


def phase_config(config: MemoryConfig, *, k: int | None = None) -> MemoryConfig:
    """The configuration the builder reads: a section switched off gets nothing to place, and
    with voting off the (no longer decayed) vote scores stop counting. `k` is the request's."""
    overrides: dict = {}
    if k is not None:
        overrides["recallInjection"] = {"k": k}
    if not config["recallInjection.enabled"]:
        overrides["recallInjection"] = {"k": 0}
    if not config["index.enabled"]:
        overrides["index"] = {"limit": 0}
    if not config["voting.enabled"]:
        overrides["scoring"] = {"votes": 0.0}
    return config.with_overrides(overrides) if overrides else config


def _working_memory(conversation, message: str, config: MemoryConfig, mode: Mode) -> list[Block]:
    """`### topics` and `### transcript` (memory/working.py); empty blocks when off."""
    topics_cap, transcript_cap = config["topics.maxTokens"], transcript_budget(config)
    topics, transcript = Block("topics", "", topics_cap), Block("transcript", "", transcript_cap)
    if topics_on(config, mode):
        text, omitted = topics_text(conversation=conversation, cap=topics_cap)
        topics = Block("topics", text, topics_cap, omitted=omitted)
    if transcript_on(config, mode):
        text, omitted = transcript_text(conversation=conversation, message=message, cap=transcript_cap)
        transcript = Block("transcript", text, transcript_cap, omitted=omitted)
    return [topics, transcript]


def _consequences_on(config: MemoryConfig, mode: Mode) -> bool:
    return config["consequences.enabled"] and mode.renders.get("consequences", True)


def _person_blocks(
    subject, conversation, message: str, config: MemoryConfig, mode: Mode, now
) -> tuple[list[Block], list[int]]:
    """`### contract`, `### state` and `### consequences` (memory/person/), each where the
    mode's `renders` and its `…enabled` key allow; empty blocks otherwise. Also the ids of the
    consequence chains shown (marked surfaced when the build records)."""
    blocks: list[Block] = []
    shown: list[int] = []
    cap = config["contract.maxTokens"]
    text, omitted = "", 0
    if config["contract.enabled"] and mode.renders.get("contract", False):
        text, omitted = contract_text(subject=subject, mode=mode, config=config, cap=cap)
    blocks.append(Block("contract", text, cap, omitted=omitted))
    cap = config["state.maxTokens"]
    text, omitted = "", 0
    if config["state.enabled"] and mode.renders.get("state", False) and conversation is not None:
        text, omitted = state_text(conversation=conversation, config=config, now=now, cap=cap)
    blocks.append(Block("state", text, cap, omitted=omitted))
    cap = config["consequences.maxTokens"]
    text, omitted = "", 0
    if _consequences_on(config, mode):
        text, shown, omitted = consequences_text(
            subject=subject, conversation=conversation, message=message, mode=mode, config=config, cap=cap
        )
    blocks.append(Block("consequences", text, cap, omitted=omitted))
    return blocks, shown


def context_mode(*, mode: "Mode | str | None", conversation, config: MemoryConfig) -> Mode:
    """The mode a build runs in: the request's override, else the conversation's, else
    `modes.default`. An unknown override is InvalidInput naming `mode`."""
    if isinstance(mode, Mode):
        return mode
    if mode:
        return mode_get(mode)
    if conversation is not None and conversation.mode:
        return mode_of(conversation)
    return mode_get(config["modes.default"], field="memory.modes.default")


def context_build(
    *,
    subject: Subject,
    message: str,
    config: MemoryConfig,
    conversation=None,
    k: int | None = None,
    record: bool = True,
    mode: "Mode | str | None" = None,
    profile: str = DEFAULT_PROFILE,
    consent_gate: bool = True,
) -> Context:
    """Build the context for `message` in `mode` (see `context_mode`) under the operational
    `profile` (already checked: memory/profiles.py). With `record`, writes a RetrievalEvent,
    counts recalls and updates which blocks the conversation holds (so `unchanged` is right
    next time); a conversation's follow-up turn may be served from the adaptive context cache
    (memory/context_cache.py). `consent_gate=False` (the admin replay's `no_consent_gate`
    only, which masks what it adds: memory/replay.py) lets items of the categories the person
    denies through; such a build is never recorded or cached."""
    if not consent_gate and record:
        raise ValueError("a build without the consent gate is never recorded")
    started = time.perf_counter()
    query = message.strip()
    if not config["notes.enabled"]:
        # zero cost: no query, no event, no write
        return Context(
            query=query,
            rewritten_query=query,
            enabled=False,
            stable_prefix=Block("stable_prefix", "", config["stablePrefix.maxTokens"]),
            sections=[],
            items=[],
            profile=profile,
        )
    active_mode = context_mode(mode=mode, conversation=conversation, config=config)
    config = phase_config(active_mode.apply(config), k=k)
    # a digest of the whole configuration: computed once, for the cache key and the event
    digest = policy_hash(active_mode, config)
    # a message that shows the person stuck ("still failing") is built afresh: the cached build
    # of an earlier turn holds no `### consequences`, and showing the chains is counted
    stuck = _consequences_on(config, active_mode) and bool(loop_signals(message))
    probe = context_cache_probe(
        subject=subject,
        conversation=conversation,
        record=record and not stuck and consent_gate,
        config=config,
        policy_hash=digest,
        profile=profile,
    )
    cached = context_cache_serve(probe=probe, query=query, config=config, started=started)
    if cached is not None:
        return cached
    with profile_active(profile):
        context = _build(
            subject=subject,
            query=query,
            message=message,
            config=config,
            conversation=conversation,
            record=record,
            mode=active_mode,
            profile=profile,
            digest=digest,
            started=started,
            consent_gate=consent_gate,
        )
    context_cache_remember(probe=probe, context=context)
    return context


def _select(
    *, subject, query, terms, conversation, config, now, mode: Mode, may_render
) -> tuple[dict, set[int]]:
    """Every kind's ranked candidates, less what the mode's policy keeps out (`may_render`),
    judged in one batch (memory/ranking/applicability.py) and selected per section ("profile",
    "notes", "lessons", "procedures"), best `final` first; and the notes reached over links."""

    conversation_scope = conversation.scope if conversation is not None else None

    def allowed(ranked: list[tuple]) -> list[tuple]:
        return [r for r in ranked if may_render(r[0])]

    facts = rank_facts(subject=subject, terms=terms, config=config) if config["profile.enabled"] else []
    places = config["recallInjection.k"] + config["index.limit"]  # 0: both note sections are off
    ranked = _rank_notes(subject, query, terms, conversation, config, now, mode) if terms and places else []
    expanded: set[int] = set()
    if config["retrieve.mode"] in ("fts", "full"):  # the graph belongs to the text modes' signals
        scopes = note_scopes(mode, conversation)
        ranked, expanded = ranked_expand(ranked, subject_id=subject.pk, scopes=scopes, config=config)
    lists = {
        "profile": candidates_of(
            "profile",
            lambda _: "fact",
            most_specific_facts(allowed(facts), mode=mode.name, conversation_scope=conversation_scope),
        ),
        "notes": candidates_of("notes", _kind, allowed(ranked)),
    }
    for name in ("lessons", "procedures"):
        distilled = (
            rank_distilled(name=name, subject_id=subject.pk, terms=terms, config=config)
            if terms and config[f"{name}.enabled"]
            else []
        )
        lists[name] = candidates_of(
            name, lambda _, n=name: n[:-1], allowed([(o, s, "") for o, s in distilled])
        )
    judge(
        [c for candidates in lists.values() for c in candidates],
        message=query,
        mode=mode,
        config=config,
        now=now,
    )
    return {
        name: selected(candidates, mode=mode, config=config) for name, candidates in lists.items()
    }, expanded


def _build(
    *,
    subject,
    query,
    message,
    config,
    conversation,
    record,
    mode,
    profile,
    digest,
    started,
    consent_gate=True,
) -> Context:
    rewritten, _ = rewrite_query(message=query, conversation=conversation, config=config)
    terms = query_terms(rewritten)
    now = timezone.now()
    conversation_scope = conversation.scope if conversation is not None else None
    denied = consent_denied_categories(subject=subject) if consent_gate else frozenset()

    def may_render(obj) -> bool:
        return policy_allows(obj, mode=mode, conversation_scope=conversation_scope, denied=denied)

    selection, expanded = _select(
        subject=subject,
        query=rewritten,
        terms=terms,
        conversation=conversation,
        config=config,
        now=now,
        mode=mode,
        may_render=may_render,
    )
    profile_block, profile_items = _profile(selection["profile"], config)
    beliefs = {
        c.id: c.obj for name in ("profile", "notes") for c in selection[name] if c.kind in ("fact", "note")
    }
    mirror = Mirror(subject=subject, facts=profile_items, beliefs=beliefs, config=config, allowed=may_render)
    note_blocks, note_items = _recalled_and_index(selection["notes"], config, expanded, mirror)

    summary = summary_choose(subject=subject, conversation=conversation, config=config, record=record)
    stable_prefix = _stable_prefix(summary, config)
    distilled_blocks, distilled_items = _distilled(selection, terms, config) if terms else ([], [])
    sections = [profile_block, *note_blocks, *distilled_blocks]
    if summaries_on(config):
        cap = config["memories.mentalModelsMaxTokens"]
        text, omitted = mental_models_text(subject=subject, cap=cap)
        sections.append(Block("mental_models", text, cap, omitted=omitted))
    person_blocks, consequences_shown = _person_blocks(subject, conversation, message, config, mode, now)
    sections.extend(person_blocks)
    sections.extend(_working_memory(conversation, message, config, mode))
    context = Context(
        query=query,
        rewritten_query=rewritten,
        stable_prefix=stable_prefix,
        sections=sections,
        items=profile_items + note_items + distilled_items,
        summary=summary.as_dict() if summary else None,
        mode=mode.name,
        profile=profile,
        policy_hash=digest,
    )
    context.latency_ms = (time.perf_counter() - started) * 1000
    if record:
        # one transaction for the build's writes: on SQLite each write outside one takes the
        # write lock on its own, and under load a build queued for it four times
        with transaction.atomic():
            if summary is not None and summary.pin:
                conversation_summary_pin(conversation=conversation, version=summary.version)
            if conversation is not None:
                blocks = [stable_prefix, *sections]
                unchanged = context_deliveries_update(
                    conversation=conversation, digests={b.name: b.digest for b in blocks}
                )
                for block in blocks:
                    block.unchanged = unchanged[block.name]
            recalled = [i for i in note_items if i.section == "recalled"]
            notes_mark_recalled(note_ids=[int(i.id[2:]) for i in recalled if i.kind == "note"])
            evidence_mark_recalled(evidence_ids=[int(i.id[2:]) for i in recalled if i.kind == "evidence"])
            # the consequence chains `### consequences` showed (no statement when it showed none)
            consequences_mark_surfaced(consequence_ids=consequences_shown, now=now)
            event = retrieval_event_record(
                subject=subject,
                conversation=conversation,
                query=query,
                rewritten_query=rewritten if rewritten != query else "",
                items=[i.as_dict() for i in context.items],
                tokens=context.tokens(),
                latency_ms=context.latency_ms,
                mode=context.mode,
                profile=context.profile,
                policy_hash=context.policy_hash,
            )
            context.retrieval_event_id = event.pk
    return context
