"""`bench locomo --reflect`: LoCoMo turns posted the way a chat app posts them, and scoring that
maps any context item back to the turns it came from.

Posting (`post_sample`): one chat Conversation per session, and every turn goes through
`chat.services.messages_add` — the service behind `POST …/messages` and `POST …/responses` —
one message per call, in order, with external id = dia_id and occurred_at = the session date.
The first speaker posts as role "user" and the second as "assistant" (as the harness does), the
text as said and the speaker's LoCoMo name as the message's `name` (what a chat app that knows
its users' names sends; the evidence unit keeps it). Nothing else is written: no note per turn. An assistant
message closes a turn and queues its reflection (`reflection_enqueue`); the caller runs
background tasks inline (eager, as the in-process benches of `manage.py bench` do), so the
reflection, the note links and (with embeddings on) the note vectors are written before the
call returns. Consent is the default policy, so a memory in a sensitive category waits as
pending (counted). A session's trailing user turns, with no reply after them, are reflected by
the idle-turn sweeper (`chat.reflect.idle_turns_reflect`) once the conversation has been quiet
for MEMORYWEB_IDLE_TURN_MINUTES: the bench runs that sweep over the posted subject after posting,
with the clock moved past the quiet time, as the beat would in a running deployment (the
harness's conversations, never reflected, are left alone). With `allow_all` the subject allows
every consent category before posting: nothing waits as pending.

Scoring (`Provenance`): an item of the context counts for the dia_ids of the messages it comes
from, whatever its kind. A kind's model (`KIND_MODELS`, or the `memory` model of that name) is read through every foreign key it has to
Message, and through every model that holds a foreign key to both it and Message (a note's
NoteSource rows, so a note that dedup merged counts for every turn it came from).
"""

import importlib
import time
from collections import Counter, defaultdict
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.db.models import Max, Model
from django.utils import timezone

from chat.models import ReflectionRun, RunStatus
from chat.reflect import idle_turns_reflect
from chat.services import messages_add
from memory.models import (
    ConsentCategory,
    Evidence,
    Lesson,
    Message,
    Note,
    NoteSource,
    Origin,
    Policy,
    Procedure,
    ProfileFact,
)
from memory.services import Actor, subject_get_or_create
from memory.services.consent import consent_policy_set
from memory.services.conversations import conversation_get_or_create
from memoryweb.bench.locomo_data import Sample, canonical_dia_id

KIND_MODELS = {
    "note": Note,
    "fact": ProfileFact,
    "lesson": Lesson,
    "procedure": Procedure,
    "evidence": Evidence,
}
STAT_KEYS = ("facts", "notes", "pending", "denied", "evolved", "retracted")


def warm_up() -> float:
    """Import what `turn_reflect` imports lazily on its first call (the LLM client layer alone
    takes seconds), so the timed posting measures per-turn work, not a once-per-process cost.
    Returns the seconds it took."""
    started = time.perf_counter()
    for module in (
        "memoryweb.llm",
        "chat.reflection.llm",
        "chat.reflection.heuristics",
        "chat.reflection.ops",
    ):
        importlib.import_module(module)
    return time.perf_counter() - started


def post_sample(sample: Sample, *, app, actor: Actor, allow_all: bool = False) -> tuple[object, dict]:
    """Post every turn of the conversation through `messages_add`; returns the subject and stats
    (turns, seconds: the posting with everything it ran inline). With `allow_all` the subject
    allows every consent category first (`consent_policy_set`), as a person who approved
    everything would: nothing waits as pending."""
    subject = subject_get_or_create(app=app, external_id=sample.sample_id)
    if allow_all:
        for slug in ConsentCategory.objects.values_list("slug", flat=True):
            consent_policy_set(subject=subject, category=slug, policy=Policy.ALLOW, actor=actor)
    roles = {sample.speaker_a: "user", sample.speaker_b: "assistant"}
    turns = 0
    started = time.perf_counter()
    for session in sample.sessions:
        conversation, _ = conversation_get_or_create(
            subject=subject, external_id=f"session_{session.number}", actor=actor
        )
        for turn in session.turns:
            item = {
                "role": roles.get(turn.speaker, "user"),
                "name": turn.speaker,
                "text": turn.message_text,
                "occurred_at": session.date,
                "external_id": turn.dia_id,
            }
            messages_add(conversation=conversation, items=[item], actor=actor)
            turns += 1
    # the beat's idle-turn sweep, as it would run once the sessions have gone quiet
    # (this subject's conversations only: the harness's, never reflected, must stay as they are)
    idle_turns_reflect(
        now=timezone.now() + timedelta(minutes=settings.MEMORYWEB_IDLE_TURN_MINUTES + 1), subject=subject
    )
    return subject, {"turns": turns, "seconds": time.perf_counter() - started}


def reflection_stats(subject) -> dict:
    """What the subject's reflections did: runs by status, their summed stats, the paths taken,
    and the messages no finished run covers (trailing user turns with no reply)."""
    runs = ReflectionRun.objects.filter(conversation__subject=subject)
    statuses = Counter(runs.values_list("status", flat=True))
    totals: Counter = Counter()
    sources: Counter = Counter()
    for stats in runs.filter(status=RunStatus.DONE).values_list("stats", flat=True):
        for key in STAT_KEYS:
            totals[key] += (stats or {}).get(key, 0)
        sources[(stats or {}).get("source", "none")] += 1
    covered = dict(
        runs.filter(status=RunStatus.DONE)
        .values("conversation_id")
        .annotate(last=Max("through_message_id"))
        .values_list("conversation_id", "last")
    )
    unreflected = sum(
        1
        for conversation_id, pk in Message.objects.filter(conversation__subject=subject).values_list(
            "conversation_id", "pk"
        )
        if pk > covered.get(conversation_id, 0)
    )
    return {
        "runs": dict(statuses),
        **{key: totals[key] for key in STAT_KEYS},
        "sources": dict(sources),
        "unreflected_messages": unreflected,
    }


def stored_counts(subject) -> dict[str, int]:
    """What the pipeline left in the subject: active facts, fact versions, notes, pending
    memories, and the rows of any kind model beyond those (e.g. evidence units, once they exist)."""
    facts = ProfileFact.objects.filter(subject=subject, origin=Origin.REFLECTION)
    counts = {
        "facts_active": facts.filter(valid_to=None).count(),
        "fact_versions": facts.count(),
        "notes_rows": Note.objects.filter(subject=subject).count(),
        "pending_rows": subject.pending.count(),
    }
    evidence = _kind_model("evidence")
    if evidence is not None:
        counts["evidence_rows"] = evidence.objects.filter(**_subject_lookup(evidence, subject)).count()
    return counts


def _kind_model(kind: str):
    if kind in KIND_MODELS:
        return KIND_MODELS[kind]
    try:
        return apps.get_model("memory", kind)
    except LookupError:
        return None


def _subject_lookup(model, subject) -> dict:
    """A filter for `model`'s rows of the subject: its own subject key, or its message's."""
    names = {f.name for f in model._meta.get_fields()}
    if "subject" in names:
        return {"subject": subject}
    field = _message_keys(model)[0]
    return {f"{field}__conversation__subject": subject}


def _message_keys(model) -> list[str]:
    """The names of `model`'s foreign keys to Message."""
    return [
        f.name
        for f in model._meta.get_fields()
        if (f.many_to_one or f.one_to_one) and f.concrete and f.related_model is Message
    ]


def _source_tables(model) -> list[tuple[type[Model], str, str]]:
    """(table, key to `model`, key to Message) for every memory model holding both keys."""
    tables: list[tuple[type[Model], str, str]] = []
    for table in apps.get_app_config("memory").get_models():
        if table is model:
            continue
        to_model = [f.name for f in table._meta.get_fields() if f.many_to_one and f.related_model is model]
        to_message = _message_keys(table)
        if to_model and to_message:
            tables.append((table, to_model[0], to_message[0]))
    return tables


class Provenance:
    """The dia_ids a context item comes from, looked up once per item."""

    def __init__(self):
        self._cache: dict[tuple[str, int], frozenset[str]] = {}
        self._plans: dict[str, list[tuple[object, str, str]] | None] = {}

    def _plan(self, kind: str):
        if kind not in self._plans:
            model = _kind_model(kind)
            if model is None:
                self._plans[kind] = None
            else:
                direct = [(model, "pk", key) for key in _message_keys(model)]
                self._plans[kind] = direct + _source_tables(model)
        return self._plans[kind]

    def _load(self, kind: str, pks: list[int]) -> None:
        found: dict[int, set[str]] = defaultdict(set)
        for table, item_key, message_key in self._plan(kind) or []:
            rows = table.objects.filter(**{f"{item_key}__in": pks, f"{message_key}__isnull": False})
            for pk, dia_id in rows.values_list(item_key, f"{message_key}__external_id"):
                if (canonical := canonical_dia_id(dia_id)) is not None:
                    found[pk].add(canonical)
        for pk in pks:
            self._cache[(kind, pk)] = frozenset(found.get(pk, ()))

    def dia_ids(self, items, *, exclude_sections: frozenset[str] = frozenset()) -> dict[str, set[str]]:
        """The dia_ids the items (outside `exclude_sections`) come from, by item kind."""
        wanted = [
            (item.kind, int(number))
            for item in items
            if item.section not in exclude_sections and (number := item.id.rpartition(":")[2]).isdigit()
        ]
        missing: dict[str, list[int]] = defaultdict(list)
        for key in wanted:
            if key not in self._cache:
                missing[key[0]].append(key[1])
        for kind, pks in missing.items():
            self._load(kind, pks)
        by_kind: dict[str, set[str]] = defaultdict(set)
        for key in wanted:
            by_kind[key[0]] |= self._cache[key]
        return dict(by_kind)


def note_dia_ids(subject) -> dict[int, set[str]]:
    """Every note of the subject → the dia_ids of the messages it came from (its NoteSource rows
    and its `source_message`); the harness's scoring."""
    note_dia: dict[int, set[str]] = defaultdict(set)
    pairs = [
        *NoteSource.objects.filter(note__subject=subject, message__isnull=False).values_list(
            "note_id", "message__external_id"
        ),
        *Note.objects.filter(subject=subject, source_message__isnull=False).values_list(
            "pk", "source_message__external_id"
        ),
    ]
    for note_id, dia_id in pairs:
        if (canonical := canonical_dia_id(dia_id)) is not None:
            note_dia[note_id].add(canonical)
    return dict(note_dia)
