"""Reflection: after a turn, extract SET / NOTE / EVOLVE operations and write them.

`reflection_enqueue` supersedes the conversation's open runs and queues a new one (the task
starts on commit, through the task outbox). `turn_reflect` claims the run (heartbeating while
it runs, so `reflections_reclaim` can tell a dead worker's run and redo it), reads the messages since the last finished
run, extracts operations (a configured LLM first, the heuristic extractor when there is none
or its answer is unusable), then writes everything in one transaction that first checks the
run was not superseded meanwhile — a superseded run writes nothing. The caps count per
message (`_capped`): a backlog reflected at once keeps every turn's memories, and what a cap
drops is counted in the run's stats and the `reflection.dropped.*` counters.

A message longer than `chunking.thresholdChars` is cut into chunks (chat.reflection.chunking)
and extracted chunk by chunk on either path, each chunk knowing what the earlier ones gave
(chat.reflection.accumulator); the run's `stats.chunking` says how.

Every candidate is redacted for secrets, grounded in time against its message, classified
for consent and routed (store / ask / deny); notes are deduplicated by `note_store`. Every
user and assistant message of the run also becomes an evidence unit (memory.services.evidence)
under its own category's consent policy, so a turn extraction missed is still retrievable.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.utils import timezone

from chat.models import ReflectionRun, RunStatus
from chat.observe import observe_turn
from chat.reflection.accumulator import NAME_KEYS, ChunkedMessage, extraction_operations
from chat.reflection.chunking import Chunking, message_chunks
from chat.reflection.heuristics import extract
from chat.reflection.llm import llm_operations
from chat.reflection.ops import LIST_KEYS, Operation
from memory.beliefs.detect import Claim
from memory.categories import classify_category, item_category
from memory.config import MemoryConfig, get_config
from memory.leases import heartbeating, lease_owner_id, stale_before
from memory.models import (
    Conversation,
    Evidence,
    EvidenceStatus,
    ItemKind,
    Message,
    Note,
    Origin,
    ProfileFact,
    Role,
)
from memory.redaction import redact
from memory.search.lexical import NoteFilter
from memory.selectors import note_near_duplicates
from memory.services import Actor, fact_remove, fact_set, note_edit
from memory.services.beliefs import belief_revise
from memory.services.consent import memory_candidate_route
from memory.services.evidence import evidence_record
from memory.temporal import ground
from memoryweb.counters import counter_add
from memoryweb.errors import MemorywebError
from memoryweb.llm import client_for
from memoryweb.outbox import enqueue
from memoryweb.profiles import DEFAULT_PROFILE, profile_active

logger = logging.getLogger(__name__)

OPEN = [RunStatus.QUEUED, RunStatus.RUNNING]


def reflection_enqueue(
    *, conversation: Conversation, through_message: Message, profile: str = DEFAULT_PROFILE
) -> ReflectionRun:
    """Queue a reflection of the conversation up to `through_message`, superseding open runs.
    The run keeps the operational `profile` it was asked under (memoryweb/profiles.py)."""
    with transaction.atomic():
        ReflectionRun.objects.filter(conversation=conversation, status__in=OPEN).update(
            status=RunStatus.SUPERSEDED, finished_at=timezone.now()
        )
        run = ReflectionRun.objects.create(
            conversation=conversation, through_message=through_message, profile=profile
        )
        enqueue("chat.turn_reflect", run.pk)
    return run


def _messages(run: ReflectionRun, *, from_start: bool = False) -> list[Message]:
    """The messages the run reads: those after the last finished run (every one when
    `from_start`, a rebuild), up to its `through_message`."""
    last_done = (
        None
        if from_start
        else (
            ReflectionRun.objects.filter(conversation_id=run.conversation_id, status=RunStatus.DONE)
            .order_by("-through_message_id")
            .first()
        )
    )
    start = last_done.through_message_id if last_done else 0
    return list(
        Message.objects.filter(
            conversation_id=run.conversation_id, pk__gt=start, pk__lte=run.through_message_id
        ).order_by("occurred_at", "id")
    )


def _known_names(subject) -> tuple[str, ...]:
    """The person's names the profile holds: a transcript speaker labelled so is the person."""
    return tuple(
        ProfileFact.objects.filter(subject=subject, key__in=NAME_KEYS, valid_to=None).values_list(
            "value", flat=True
        )
    )


def _chunkings(messages: list[Message], config: MemoryConfig) -> dict[int, Chunking]:
    """The chunks of each message long enough to be extracted chunk by chunk."""
    found = {}
    for message in messages:
        if message.role != Role.SYSTEM and (chunking := message_chunks(message.text, config=config)):
            found[message.pk] = chunking
    return found


def _chunking_stats(chunkings: dict[int, Chunking]) -> dict:
    """What the run's stats say about chunking: how many messages and chunks, the deepest level
    used, and why level 1 cut by size when it did."""
    return {
        "messages": len(chunkings),
        "chunks": sum(len(c.chunks) for c in chunkings.values()),
        "level": max((c.level for c in chunkings.values()), default=0),
        "model_cuts": sum(c.model_cuts for c in chunkings.values()),
        "fallback": next((c.fallback for c in chunkings.values() if c.fallback), ""),
    }


def _heuristic_operations(
    messages: list[Message], chunkings: dict[int, Chunking] | None = None, known_names: tuple[str, ...] = ()
) -> list[Operation]:
    """The heuristic extractor's operations, message by message; a long message chunk by chunk."""
    chunkings = chunkings or {}
    ops: list[Operation] = []
    for message in messages:
        chunking = chunkings.get(message.pk)
        if chunking is None:
            extraction = extract(message.text, role=message.role, occurred_at=message.occurred_at)
            ops += extraction_operations(extraction, message)
            continue
        reader = ChunkedMessage(message, chunking, known_names=known_names)
        for index, chunk in enumerate(chunking.chunks):
            reader.read(index, chunk)
        ops += reader.operations()
    return ops


def _llm_operations(
    messages: list[Message], subject, config: MemoryConfig, chunkings: dict[int, Chunking] | None = None
) -> list[Operation] | None:
    """The model's operations: the messages in one call, except that a long message is asked
    about chunk by chunk, each chunk's prompt saying what the earlier ones gave. None when the
    model is not configured or any answer is unusable (the heuristic path then runs)."""
    client = client_for("reflection", config)
    if client is None:
        return None
    chunkings = chunkings or {}
    ops: list[Operation] = []
    batch: list[Message] = []
    for message in [*messages, None]:
        if message is not None and message.pk not in chunkings:
            batch.append(message)
            continue
        if batch:  # the whole messages so far, in one call as always
            found = llm_operations(client, batch, subject=subject, config=config, operation_class=Operation)
            if found is None:
                return None
            ops += found
            batch = []
        if message is None:
            break
        reader = ChunkedMessage(message, chunkings[message.pk])
        for index, chunk in enumerate(chunkings[message.pk].chunks):
            found = llm_operations(
                client,
                [reader.turn(chunk)],
                subject=subject,
                config=config,
                operation_class=Operation,
                earlier=reader.earlier(index),
            )
            if found is None:
                return None
            reader.take_model(index, found)
        ops += reader.operations()
    return ops


def _evolve_instead(op: Operation, subject, config: MemoryConfig) -> Operation:
    """A NOTE that repeats an existing note but brings new tags refines that note's tags instead."""
    if not op.tags:
        return op
    near = note_near_duplicates(subject=subject, content=op.content, config=config, filters=NoteFilter())
    if not near:
        return op
    note = near[0][0]
    new_tags = [t for t in op.tags if t not in note.tags]
    if new_tags:
        return Operation(op="EVOLVE", message=op.message, note_id=note.pk, add_tags=new_tags)
    return op  # same tags: note_store merges it and keeps the provenance


def _prepare(op: Operation) -> Operation:
    """Redact secrets, ground relative dates, classify sensitivity (when the extractor did not)."""

    redactions = 0
    for name in ("value", "content"):
        text = getattr(op, name)
        if text:
            result = redact(text)
            setattr(op, name, result.text)
            redactions += result.count
    if redactions:
        counter_add("redaction.reflection", redactions)
    if op.op == "NOTE":
        grounded, event_date = ground(op.content, op.message.occurred_at)
        op.content = grounded
        if op.occurred_at is None:
            if event_date is not None:
                op.occurred_at = timezone.make_aware(datetime.combine(event_date, datetime.min.time()))
            else:
                op.occurred_at = op.message.occurred_at
    if not op.category:  # a model's item with none: its own words, else its clause's (as the heuristics do)
        if op.op == "NOTE":
            op.category = item_category(op.content, op.message.text)
        else:
            op.category = item_category(op.value, op.message.text, op.key)
    return op


def _switched_on(ops: list[Operation], config: MemoryConfig) -> list[Operation]:
    """Drop the operations of phases switched off, before the caps count them: facts
    (SET, RETRACT) with `profile.enabled` false, EVOLVE with `evolution.enabled` false."""
    off = set()
    if not config["profile.enabled"]:
        off |= {"SET", "RETRACT"}
    if not config["evolution.enabled"]:
        off.add("EVOLVE")
    return [o for o in ops if o.op not in off]


def _capped(ops: list[Operation], config: MemoryConfig) -> tuple[list[Operation], dict[str, int]]:
    """Each message (each chunk of a long one) keeps at most `reflection.maxFactsPerCall` facts
    and retractions and `reflection.maxNotesPerCall` notes and tag refinements, in the
    extractor's order: the caps bound one turn's extraction, so a backlog of turns reflected at once keeps every turn's
    memories. Returns the kept operations and how many of each kind a cap dropped."""
    caps = {"facts": config["reflection.maxFactsPerCall"], "notes": config["reflection.maxNotesPerCall"]}
    used: dict[tuple[int, int, str], int] = {}
    dropped = {"facts": 0, "notes": 0}
    kept = []
    for op in ops:
        kind = "facts" if op.op in ("SET", "RETRACT") else "notes"
        slot = (op.message.pk, op.chunk, kind)
        if used.get(slot, 0) >= caps[kind]:
            dropped[kind] += 1
            continue
        used[slot] = used.get(slot, 0) + 1
        kept.append(op)
    return kept, dropped


def _count_dropped(dropped: dict[str, int]) -> None:
    """What the caps dropped, for diagnose (`reflection.dropped.*`, `reflection.runs_with_drops`)."""
    for kind, count in dropped.items():
        counter_add(f"reflection.dropped.{kind}", count)
    if any(dropped.values()):
        counter_add("reflection.runs_with_drops")


def _still_running(run_id: int) -> bool:
    queryset = ReflectionRun.objects.filter(pk=run_id, status=RunStatus.RUNNING)
    if connection.features.has_select_for_update:
        queryset = queryset.select_for_update()
    return queryset.exists()


def turn_reflect(*, run_id: int) -> dict:
    """Run one reflection. Safe to repeat: only a queued run is claimed, and a run that was
    superseded before it writes leaves no trace but its status."""
    owner = lease_owner_id()
    now = timezone.now()
    claimed = ReflectionRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=now, owner=owner, heartbeat_at=now
    )
    if not claimed:
        return {"run": run_id, "skipped": "not queued"}
    profile = ReflectionRun.objects.filter(pk=run_id).values_list("profile", flat=True).first()
    with heartbeating(lambda: _alive(run_id, owner)), profile_active(profile or DEFAULT_PROFILE):
        return _reflect(run_id)


def _alive(run_id: int, owner: str) -> bool:
    return bool(
        ReflectionRun.objects.filter(pk=run_id, owner=owner, status=RunStatus.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    )


def _reflect(run_id: int, *, rebuild: bool = False) -> dict:
    run = ReflectionRun.objects.select_related("conversation__subject__app").get(pk=run_id)
    subject = run.conversation.subject
    config = get_config(subject.app)
    actor = Actor.task(f"reflection:{run.pk}")
    stats: dict = {
        "messages": 0,
        "facts": 0,
        "notes": 0,
        "evolved": 0,
        "pending": 0,
        "denied": 0,
        "evidence": 0,
        "evidence_pending": 0,  # turns waiting for the person's consent (stats["pending"] counts memories)
        "source": "none",
    }
    try:
        messages = _messages(run, from_start=rebuild)
        stats["messages"] = len(messages)
        ops = None
        if config["reflection.enabled"] and messages:
            chunkings = _chunkings(messages, config)
            if chunkings:
                stats["chunking"] = _chunking_stats(chunkings)
            ops = _llm_operations(messages, subject, config, chunkings)
            stats["source"] = "llm" if ops is not None else "heuristic"
            if ops is None:
                ops = _heuristic_operations(messages, chunkings, _known_names(subject))
        ops, dropped = _capped(_switched_on(ops or [], config), config)
        stats["dropped"] = dropped
        _count_dropped(dropped)
        facts = [o for o in ops if o.op in ("SET", "RETRACT")]
        notes = [o for o in ops if o.op in ("NOTE", "EVOLVE")]
        notes = [o if o.op == "EVOLVE" else _prepare(o) for o in notes]
        if config["evolution.enabled"]:
            notes = [o if o.op == "EVOLVE" else _evolve_instead(o, subject, config) for o in notes]
        prepared = [_prepare(o) for o in facts] + notes
        # every turn becomes evidence, whatever extraction found: classified for consent here
        turns = [(m, classify_category(m.text)) for m in messages if m.role != Role.SYSTEM]
        with transaction.atomic():
            if not _still_running(run.pk):
                return {"run": run.pk, "skipped": "superseded"}
            for op in prepared:
                try:
                    with transaction.atomic():  # one bad operation must not lose the others
                        _apply(op, subject=subject, actor=actor, config=config, stats=stats)
                except MemorywebError as exc:
                    counter_add("reflection.invalid_operation")
                    logger.warning("reflection %s: skipped a %s operation (%s)", run.pk, op.op, exc.field)
            for message, category in turns:
                try:
                    with transaction.atomic():
                        unit = evidence_record(message=message, category=category, actor=actor, config=config)
                    if unit is not None:
                        stats["evidence"] += 1
                        stats["evidence_pending"] += unit.status == EvidenceStatus.PENDING
                except MemorywebError as exc:
                    counter_add("reflection.invalid_operation")
                    logger.warning(
                        "reflection %s: no evidence for message %s (%s)", run.pk, message.pk, exc.field
                    )
            # the observers (feedback votes, …) saw these turns when they were new: a rebuild
            # re-reads them for memories only, so votes are not cast twice
            observed = (
                {}
                if rebuild
                else observe_turn(messages=messages, subject=subject, actor=actor, config=config)
            )
            if any(observed.values()):
                stats["observed"] = observed
            ReflectionRun.objects.filter(pk=run.pk).update(
                status=RunStatus.DONE, stats=stats, finished_at=timezone.now()
            )
    except Exception as exc:
        logger.exception("reflection %s failed", run.pk)
        ReflectionRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now()
        )
        raise
    return {"run": run.pk, **stats}


def _subject_rows(subject) -> dict[str, int]:
    return {
        "facts": ProfileFact.objects.filter(subject=subject).count(),
        "notes": Note.objects.filter(subject=subject).count(),
        "evidence": Evidence.objects.filter(subject=subject).count(),
    }


def conversation_rebuild(*, conversation: Conversation) -> dict:
    """Re-run reflection over every message of the conversation, now, in this process: one
    run through its newest message (open runs are superseded: it covers their messages) that
    reads the conversation from its first message. Safe to repeat, and a repeat writes nothing:
    evidence is one unit per message, notes are deduplicated by `note_store`, a pending item is
    queued once, and a fact or note is not reinforced again by a message that already
    confirmed it (memory.services.beliefs). The observers are not re-run. Returns the messages
    re-read and the fact, note and evidence rows it added."""
    newest = conversation.messages.order_by("-pk").first()
    if newest is None:
        return {"messages": 0, "facts": 0, "notes": 0, "evidence": 0, "run": None}
    subject = conversation.subject
    before = _subject_rows(subject)
    owner = lease_owner_id()
    now = timezone.now()
    with transaction.atomic():
        ReflectionRun.objects.filter(conversation=conversation, status__in=OPEN).update(
            status=RunStatus.SUPERSEDED, finished_at=now
        )
        run = ReflectionRun.objects.create(
            conversation=conversation,
            through_message=newest,
            status=RunStatus.RUNNING,
            started_at=now,
            owner=owner,
            heartbeat_at=now,
        )
    with heartbeating(lambda: _alive(run.pk, owner)), profile_active(DEFAULT_PROFILE):
        stats = _reflect(run.pk, rebuild=True)
    after = _subject_rows(subject)
    return {
        "messages": stats.get("messages", 0),
        **{name: after[name] - before[name] for name in after},
        "run": run.pk,
    }


def subject_rebuild(*, subject) -> dict:
    """`conversation_rebuild` of each of the subject's conversations, oldest first; the sums.
    Safe to repeat (see conversation_rebuild)."""
    totals = {"conversations": 0, "messages": 0, "facts": 0, "notes": 0, "evidence": 0}
    for conversation in Conversation.objects.filter(subject=subject).order_by("created_at", "pk"):
        result = conversation_rebuild(conversation=conversation)
        totals["conversations"] += 1
        for name in ("messages", "facts", "notes", "evidence"):
            totals[name] += result[name]
    return totals


def _merged_list_value(subject, op: Operation) -> str:
    """For list-like keys ("languages"), the new items join the active ones instead of replacing them."""

    if op.key not in LIST_KEYS:
        return op.value
    active = ProfileFact.objects.filter(subject=subject, key=op.key, mode="", scope="", valid_to=None).first()
    if active is None:
        return op.value
    items = [i.strip() for i in active.value.split(",") if i.strip()]
    for item in (i.strip() for i in op.value.split(",")):
        if item and item.lower() not in {i.lower() for i in items}:
            items.append(item)
    return ", ".join(items)


def _apply(op: Operation, *, subject, actor: Actor, config: MemoryConfig, stats: dict) -> None:
    if op.op == "RETRACT":
        active = ProfileFact.objects.filter(
            subject=subject, key=op.key, mode="", scope="", valid_to=None
        ).first()
        if active is not None and (not op.value or op.value.lower() in active.value.lower()):
            items = [i.strip() for i in active.value.split(",") if i.strip()]
            left = [i for i in items if i.lower() != op.value.strip().lower()]
            if op.key in LIST_KEYS and op.value and left and len(left) < len(items):
                # one item of a list ends ("not on sertraline anymore"); the others stay
                fact_set(
                    subject=subject,
                    key=op.key,
                    value=", ".join(left),
                    pinned=active.pinned,
                    keywords=active.keywords,
                    confidence=active.confidence,
                    category=active.category,
                    origin=Origin.REFLECTION,
                    source_message=op.message,
                    # from when it was said, never before the version it shortens began
                    valid_from=max(op.message.occurred_at, active.valid_from),
                    actor=actor,
                )
            elif config["beliefs.revision.enabled"]:
                # the fact ends: new evidence against it (ARCHIVE, or WEAKEN when said with doubt),
                # closed when it was said
                belief_revise(
                    subject=subject,
                    claim=Claim(kind="fact", key=op.key, value="", mode="", scope=""),
                    message=op.message,
                    actor=actor,
                    config=config,
                )
            else:
                # closed when it was said (fact_remove never closes a version before it began)
                fact_remove(subject=subject, key=op.key, valid_to=op.message.occurred_at, actor=actor)
            stats["retracted"] = stats.get("retracted", 0) + 1
        return
    if op.op == "EVOLVE":
        note = Note.objects.filter(pk=op.note_id or 0, subject=subject).first()
        if note is None:
            return
        tags = [t for t in note.tags if t not in op.remove_tags] + [
            t for t in op.add_tags if t not in note.tags
        ]
        if tags != note.tags:
            note_edit(
                note=note,
                tags=tags[: config["notes.maxTags"]],
                origin="reflection",
                actor=actor,
                config=config,
            )
            stats["evolved"] += 1
        return
    if op.op == "SET":
        kind = ItemKind.FACT
        payload = {
            "key": op.key,
            "value": _merged_list_value(subject, op),
            "pinned": op.pinned,
            "keywords": op.keywords,
            "confidence": op.confidence,
        }
    else:
        kind = ItemKind.NOTE
        payload = {"content": op.content, "tags": op.tags, "occurred_at": op.occurred_at}
    outcome = memory_candidate_route(
        subject=subject,
        kind=kind,
        payload=payload,
        category=op.category,
        source_message=op.message,
        actor=actor,
        config=config,
        revise=True,  # new evidence against what is believed (memory/beliefs/): detect, decide, apply
    )
    if outcome.action == "stored":
        stats["facts" if kind == ItemKind.FACT else "notes"] += 1
    elif outcome.action == "pending":
        stats["pending"] += 1
    elif outcome.action == "denied":
        stats["denied"] += 1


def reflections_open(*, conversation_ids: list[int]) -> tuple[int, int]:
    """How many reflections of these conversations are queued or running with a live worker,
    and how many are running with a worker that stopped heartbeating (dead: the sweeper
    redoes them; nobody should wait on them)."""
    dead = Q(status=RunStatus.RUNNING, heartbeat_at__lt=stale_before())
    counts = ReflectionRun.objects.filter(conversation_id__in=conversation_ids, status__in=OPEN).aggregate(
        live=Count("pk", filter=~dead), dead=Count("pk", filter=dead)
    )
    return counts["live"], counts["dead"]


MAX_REDOS = 3  # a turn whose reflection killed its worker this often is given up


def reflections_reclaim() -> dict:
    """The sweeper: a running reflection whose worker stopped heartbeating is marked abandoned
    and its turn queued again (unless a newer run of the conversation already covers it, or
    the turn has been abandoned MAX_REDOS times); a queued one whose task no worker took for
    MEMORYWEB_REDISPATCH_SECONDS has its task sent again. Safe to repeat and to race: each row
    is taken by one conditional UPDATE."""
    cutoff = stale_before()
    stats = {"abandoned": 0, "requeued": 0, "given_up": 0, "redispatched": 0}
    for run in ReflectionRun.objects.filter(status=RunStatus.RUNNING, heartbeat_at__lt=cutoff).select_related(
        "conversation", "through_message"
    ):
        with transaction.atomic():
            taken = ReflectionRun.objects.filter(
                pk=run.pk, status=RunStatus.RUNNING, heartbeat_at__lt=cutoff
            ).update(
                status=RunStatus.ABANDONED,
                finished_at=timezone.now(),
                error=f"its worker ({run.owner}) stopped heartbeating at {run.heartbeat_at:%Y-%m-%d %H:%M:%S}",
            )
            if not taken:
                continue
            stats["abandoned"] += 1
            if ReflectionRun.objects.filter(conversation_id=run.conversation_id, status__in=OPEN).exists():
                continue  # a newer turn's run reads these messages too
            tries = ReflectionRun.objects.filter(
                conversation_id=run.conversation_id,
                through_message_id=run.through_message_id,
                status=RunStatus.ABANDONED,
            ).count()
            if tries >= MAX_REDOS:
                logger.error(
                    "reflection of message %s abandoned %s times: given up", run.through_message_id, tries
                )
                counter_add("reflection.given_up")
                stats["given_up"] += 1
                continue
            reflection_enqueue(
                conversation=run.conversation, through_message=run.through_message, profile=run.profile
            )
            stats["requeued"] += 1
    now = timezone.now()
    undelivered = now - timedelta(seconds=settings.MEMORYWEB_REDISPATCH_SECONDS)
    for pk in ReflectionRun.objects.filter(status=RunStatus.QUEUED, heartbeat_at__lt=undelivered).values_list(
        "pk", flat=True
    ):
        if ReflectionRun.objects.filter(pk=pk, status=RunStatus.QUEUED, heartbeat_at__lt=undelivered).update(
            heartbeat_at=now
        ):
            enqueue("chat.turn_reflect", pk)
            stats["redispatched"] += 1
    return stats


IDLE_LOOKBACK = timedelta(days=7)
IDLE_BATCH = 500


def idle_turns_reflect(*, now: datetime | None = None, subject=None) -> dict:
    """The sweeper for turns no reply closed: a conversation whose newest message no
    reflection run covers (done, open or given up) and that has been quiet for
    MEMORYWEB_IDLE_TURN_MINUTES gets a reflection through that message, so a user's last
    words before leaving become evidence and memories too. Conversations quiet for longer than
    IDLE_LOOKBACK were swept when they went quiet. Safe to repeat: a covered conversation is
    skipped, and reflection_enqueue supersedes any run queued meanwhile. With `subject`, only
    that subject's conversations are swept (the beat sweeps them all)."""
    now = now or timezone.now()
    conversations = (
        Conversation.objects.filter(subject=subject) if subject is not None else Conversation.objects
    )
    quiet_since = now - timedelta(minutes=settings.MEMORYWEB_IDLE_TURN_MINUTES)
    newest = Message.objects.filter(conversation=OuterRef("pk")).order_by("-pk").values("pk")[:1]
    covered = (
        ReflectionRun.objects.filter(
            conversation=OuterRef("pk"), status__in=[*OPEN, RunStatus.DONE, RunStatus.ABANDONED]
        )
        .order_by("-through_message_id")
        .values("through_message_id")[:1]
    )
    idle = (
        conversations.filter(updated_at__lt=quiet_since, updated_at__gte=now - IDLE_LOOKBACK)
        .annotate(newest_id=Subquery(newest), covered_id=Subquery(covered))
        .filter(newest_id__isnull=False)
        .filter(Q(covered_id__isnull=True) | Q(covered_id__lt=F("newest_id")))
        .order_by("updated_at")[:IDLE_BATCH]
    )
    queued = 0
    for conversation in idle:
        reflection_enqueue(
            conversation=conversation, through_message=Message.objects.get(pk=conversation.newest_id)
        )
        queued += 1
    return {"queued": queued}


def response_needs_reflection(message: Message) -> bool:
    return message.role == Role.ASSISTANT
