"""The memory data model (DESIGN §3). Fields, choices, constraints and pure methods only."""

import hashlib
import json

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


def key_secret_hash(raw_key: str) -> str:
    """What an API key or an admin key row stores of the secret: its SHA-256, hex."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


class App(models.Model):
    """A chat app or agent using the sidecar: the tenant boundary."""

    name = models.CharField(max_length=100, unique=True)
    paused = models.BooleanField(default=False)
    config = models.JSONField(default=dict, blank=True, help_text='Overrides, shaped {"memory": {...}}')
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return self.name


class ApiKeyQuerySet(models.QuerySet):
    def usable(self, when=None):
        """Keys that authenticate at `when` (now): see `ApiKey.usable_at`."""
        when = when or timezone.now()
        return self.filter(Q(expires_at=None) | Q(expires_at__gt=when), revoked_at=None)


class ApiKey(models.Model):
    """An app's API key. Only a SHA-256 of the secret is stored; the key is shown once.

    Rotating an app's keys mints a new one and gives the old ones an `expires_at`: both work
    until then (clients switch over in that window), after which the old ones answer 401."""

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Set by a rotation: the key works until then, beside its successor."
    )
    rate_limit = models.CharField(
        max_length=20,
        blank=True,
        help_text='Requests allowed, e.g. "600/minute" or "off"; blank: MEMORYWEB_API_RATE_LIMIT.',
    )

    objects = ApiKeyQuerySet.as_manager()

    def __str__(self):
        return f"{self.app.name}:{self.prefix}"

    def usable_at(self, when) -> bool:
        """Whether the key authenticates at `when`: not revoked, and not past a rotation's end."""
        return self.revoked_at is None and (self.expires_at is None or when < self.expires_at)

    hash_secret = staticmethod(key_secret_hash)


class Subject(models.Model):
    """The person a memory is about, within one App."""

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="subjects")
    external_id = models.CharField(max_length=200)
    display_name = models.CharField(max_length=200, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="subjects",
        help_text="The dashboard login that may curate this memory.",
    )
    # bumped by every change to what this subject's contexts are built from (memory/context_cache.py):
    # a cached context built at an older generation is stale
    memory_generation = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["app", "external_id"], name="subject_unique_per_app")]

    def __str__(self):
        return f"{self.app.name}/{self.external_id}"


class SubjectAppPause(models.Model):
    """The person's pause of one App's access to their memory (the dashboard's Apps page):
    while the row exists, that App's API calls for this subject are refused with 403
    `app_paused_for_subject` and write nothing; its other subjects are unaffected. Resuming
    deletes the row. Apart from `App.paused`, the operators' switch for the whole App."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="app_pauses")
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="subject_pauses")
    paused_at = models.DateTimeField(default=timezone.now)
    paused_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subject", "app"], name="subject_app_pause_unique")]

    def __str__(self):
        return f"{self.app.name} paused for {self.subject}"


class Conversation(models.Model):
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="conversations")
    external_id = models.CharField(max_length=200, blank=True, default="")
    mode = models.CharField(max_length=50, blank=True, default="")
    scope = models.CharField(max_length=200, blank=True, default="")
    working_dir = models.CharField(max_length=500, blank=True, default="")
    # the session summary this conversation's stable prefix carries: pinned at its first
    # context build, so the prefix stays byte-identical until the conversation asks for a reload
    summary_version = models.ForeignKey(
        "MemoryDocumentVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "external_id"],
                condition=~Q(external_id=""),
                name="conversation_external_id_unique",
            )
        ]

    def __str__(self):
        return f"c:{self.pk} {self.external_id}"


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


MESSAGE_NAME_CHARS = 64  # a speaker's name, as OpenAI's chat format bounds it
# what a speaker's name may not hold (a regex character range, Python and ECMA alike): a line
# break or other control character ("Ana\nSystem") would make the context's "Ana: …" line say
# something other than who spoke
MESSAGE_NAME_EXCLUDED = r"\x00-\x1f\x7f-\x9f\u2028\u2029"


class Message(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=20, choices=Role.choices)
    # who said it, when the app knows ("Melanie"): a group chat's member, one of several agents
    # (OpenAI's chat messages carry the same optional `name`)
    name = models.CharField(max_length=MESSAGE_NAME_CHARS, blank=True, default="")
    text = models.TextField()
    occurred_at = models.DateTimeField(default=timezone.now)
    external_id = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "external_id"],
                condition=~Q(external_id=""),
                name="message_external_id_unique",
            )
        ]
        indexes = [models.Index(fields=["conversation", "occurred_at"], name="message_timeline")]
        ordering = ["occurred_at", "id"]

    def __str__(self):
        return f"{self.role}: {self.text[:40]}"


class JobStatus(models.TextChoices):
    QUEUED = "queued"  # asked for (e.g. "consolidate now"), waiting for a worker to take it
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    ABANDONED = "abandoned"  # its lease expired (the worker died) and another run took over
    SKIPPED = "skipped"  # a queued run that found another run of its key in progress


class JobRun(models.Model):
    """One run of a periodic job, and the lease it holds while it runs.

    At most one run per `key` is running at a time (a partial unique constraint), so two
    workers cannot both hold a lease; a run whose lease expired is marked abandoned by the
    worker that takes the key over (memory/leases.py).
    """

    kind = models.CharField(max_length=40, help_text='"consolidate", "consolidate_all", "votes_decay"')
    key = models.CharField(max_length=200, help_text='The lease key, e.g. "consolidate:subject:12".')
    subject = models.ForeignKey(
        Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="job_runs"
    )
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.RUNNING)
    lease_owner = models.CharField(max_length=200, help_text="host:pid:token of the worker holding it")
    lease_seconds = models.PositiveIntegerField()
    lease_expires_at = models.DateTimeField()
    heartbeat_at = models.DateTimeField(default=timezone.now)
    stats = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    profile = models.CharField(max_length=20, default="normal", help_text="the operational profile")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key"], condition=Q(status="running"), name="jobrun_one_running_per_key"
            )
        ]
        indexes = [
            models.Index(fields=["kind", "started_at"], name="jobrun_recent"),
            models.Index(fields=["key", "status"], name="jobrun_key_status"),
            # the sweepers and flush look for running/queued runs by how old their heartbeat is
            models.Index(fields=["status", "heartbeat_at"], name="jobrun_status_heartbeat"),
        ]

    def __str__(self):
        return f"{self.key} ({self.status})"


class Origin(models.TextChoices):
    API = "api"
    REFLECTION = "reflection"
    DASHBOARD = "dashboard"
    IMPORT = "import"
    TASK = "task"


class ProfileFact(models.Model):
    """A key/value fact. Bi-temporal: every set writes a new row and closes the active one."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="facts")
    key = models.CharField(max_length=100)
    value = models.TextField()
    pinned = models.BooleanField(default=True, help_text="Pinned facts always render.")
    keywords = models.JSONField(default=list, blank=True, help_text="Contextual facts render on these.")
    mode = models.CharField(max_length=50, blank=True, default="")
    scope = models.CharField(max_length=200, blank=True, default="")
    confidence = models.FloatField(default=1.0)
    confirmations = models.PositiveIntegerField(default=0)
    vote_score = models.FloatField(default=0.0)
    category = models.CharField(max_length=40, blank=True, default="")
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.API)
    source_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    parked_at = models.DateTimeField(
        null=True, blank=True, help_text="Parked by the person: kept, never in any context or search."
    )
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    exceptions = models.JSONField(
        default=list,
        blank=True,
        help_text='MARK_EXCEPTION revisions: [{"text", "message_id", "at"}], the belief holds but not here',
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "key", "mode", "scope"],
                condition=Q(valid_to__isnull=True),
                name="fact_one_active_version",
            )
        ]
        indexes = [models.Index(fields=["subject", "key", "valid_from"], name="fact_history")]

    def __str__(self):
        return f"{self.key}={self.value[:40]}"

    @property
    def is_active(self) -> bool:
        return self.valid_to is None


class Note(models.Model):
    """Freeform memory. Content is append-only: an edit writes a NoteVersion."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="notes")
    content = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    # qualifiers (memory/modes/): a note with a mode renders only in conversations of that mode
    mode = models.CharField(max_length=50, blank=True, default="")
    scope = models.CharField(max_length=200, blank=True, default="")
    working_dir = models.CharField(max_length=500, blank=True, default="")
    conversation = models.ForeignKey(
        "Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    occurred_at = models.DateTimeField(null=True, blank=True)
    vote_score = models.FloatField(default=0.0)
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    parked_at = models.DateTimeField(
        null=True, blank=True, help_text="Parked by the person: kept, never in any context or search."
    )
    consolidated_into = models.ForeignKey(
        "Lesson",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="consolidated_notes",
        help_text="The lesson this note was distilled into (the note is archived with it).",
    )
    category = models.CharField(max_length=40, blank=True, default="")
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.API)
    confidence = models.FloatField(default=1.0, help_text="the belief's confidence, 0..1 (revision)")
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["subject", "archived_at", "created_at"], name="note_fifo"),
        ]

    def __str__(self):
        return f"n:{self.pk} {self.content[:40]}"


class NoteVersion(models.Model):
    """Every version of a note's content and tags, including the first."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    content = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.API)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["note", "version"], name="note_version_unique")]
        ordering = ["version"]

    def __str__(self):
        return f"n:{self.note_id} v{self.version}"


class NoteSource(models.Model):
    """Provenance: each message a note came from (a merged note keeps all of them)."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="sources")
    conversation = models.ForeignKey(
        "Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    message = models.ForeignKey("Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["note", "message"], name="note_source_unique")]

    def __str__(self):
        return f"n:{self.note_id} ← m:{self.message_id}"


class LinkKind(models.TextChoices):
    RELATED = "related"
    ELABORATES = "elaborates"
    CONTRADICTS = "contradicts"
    CAUSES = "causes"
    SAME_TOPIC = "same_topic"


class NoteLink(models.Model):
    src = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="links_out")
    dst = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="links_in")
    kind = models.CharField(max_length=20, choices=LinkKind.choices, default=LinkKind.RELATED)
    weight = models.FloatField(default=1.0)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.API)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["src", "dst", "kind"], name="note_link_unique"),
            models.CheckConstraint(condition=~Q(src=models.F("dst")), name="note_link_not_self"),
        ]

    def __str__(self):
        return f"n:{self.src_id} -{self.kind}-> n:{self.dst_id}"


class ItemKind(models.TextChoices):
    NOTE = "note"
    FACT = "fact"
    LESSON = "lesson"
    PROCEDURE = "procedure"
    EVIDENCE = "evidence"


class EvidenceStatus(models.TextChoices):
    VISIBLE = "visible"  # retrievable
    PENDING = "pending"  # its consent category is `ask`: waits for the person's decision
    DENIED = "denied"  # its category is `deny`, or the person declined it: never retrievable
    FORGOTTEN = "forgotten"  # forgotten (or its derived note was): kept without text, so not written again


class Evidence(models.Model):
    """One user or assistant turn as a memory of its own (the message's redacted text), so what
    reflection did not extract is still retrievable, with its date and speaker.

    Written by reflection (memory.services.evidence), one per message. Its consent `status`
    decides whether the context may show it; the chat log itself (Message) is the app's.
    """

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="evidence")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="evidence")
    role = models.CharField(max_length=20, choices=Role.choices)
    name = models.CharField(max_length=MESSAGE_NAME_CHARS, blank=True, default="", help_text="The message's.")
    text = models.TextField()
    scope = models.CharField(max_length=200, blank=True, default="", help_text="The conversation's.")
    occurred_at = models.DateTimeField()
    category = models.CharField(max_length=40, blank=True, default="")
    status = models.CharField(max_length=10, choices=EvidenceStatus.choices, default=EvidenceStatus.VISIBLE)
    vote_score = models.FloatField(default=0.0)
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "evidence"
        indexes = [
            models.Index(fields=["subject", "status", "archived_at", "created_at"], name="evidence_fifo")
        ]

    def __str__(self):
        return f"e:{self.pk} {self.role}: {self.text[:40]}"

    # what ranking reads of a note, so one scorer serves both (memory.ranking.notes): a named
    # turn reads "Melanie: …", as a transcript's turn stored as a note does
    @property
    def content(self) -> str:
        return f"{self.name}: {self.text}" if self.name and self.text else self.text

    @property
    def tags(self) -> list[str]:
        return []

    @property
    def source_message_id(self) -> int:
        return self.message_id

    @property
    def retrievable(self) -> bool:
        return self.status == EvidenceStatus.VISIBLE and self.archived_at is None


class Signal(models.TextChoices):
    UP = "up"
    DOWN = "down"
    USED = "used"
    USEFUL = "useful"
    IRRELEVANT = "irrelevant"
    INTRUSIVE = "intrusive"
    STALE = "stale"


# How much each signal moves an item's vote_score.
SIGNAL_WEIGHTS = {
    Signal.UP: 1.0,
    Signal.DOWN: -1.0,
    Signal.USED: 0.25,
    Signal.USEFUL: 0.5,
    Signal.IRRELEVANT: -0.5,
    Signal.INTRUSIVE: -1.0,
    Signal.STALE: -0.5,
}


class VoteEvent(models.Model):
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="votes")
    item_kind = models.CharField(max_length=20, choices=ItemKind.choices)
    item_id = models.BigIntegerField()
    signal = models.CharField(max_length=20, choices=Signal.choices)
    delta = models.FloatField()
    mode = models.CharField(
        max_length=50, blank=True, default="", help_text="the assistant mode the signal was given in"
    )
    actor = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["item_kind", "item_id"], name="vote_item")]

    def __str__(self):
        return f"{self.signal} {self.item_kind}:{self.item_id}"


class RetrievalEvent(models.Model):
    """One context build: what was asked, what was chosen and why, what it cost."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="retrievals")
    conversation = models.ForeignKey(
        "Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    query = models.TextField()
    rewritten_query = models.TextField(blank=True)
    items = models.JSONField(default=list)
    tokens = models.JSONField(default=dict)
    latency_ms = models.FloatField()
    mode = models.CharField(max_length=50, blank=True, default="")
    profile = models.CharField(max_length=20, default="normal", help_text="the operational profile")
    policy_hash = models.CharField(max_length=16, blank=True, default="", help_text="mode manifest + config")
    from_cache = models.BooleanField(default=False)
    staleness = models.FloatField(null=True, blank=True, help_text="of the cached build it served, 0..1")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["subject", "created_at"], name="retrieval_recent")]

    def __str__(self):
        return f"retrieval {self.pk}: {self.query[:40]}"


class ContextCacheEntry(models.Model):
    """The last context built for a conversation under one policy and operational profile,
    served again to a follow-up turn while it is fresh enough (memory/context_cache.py)."""

    conversation = models.ForeignKey("Conversation", on_delete=models.CASCADE, related_name="+")
    policy_hash = models.CharField(max_length=16)
    profile = models.CharField(max_length=20, default="normal")
    query = models.TextField(help_text="the message it was built for")
    payload = models.JSONField(help_text="the built context, as served")
    generation = models.PositiveBigIntegerField(help_text="the subject's memory_generation at the build")
    last_message_id = models.BigIntegerField(
        default=0, help_text="the subject's newest message (any conversation) at the build"
    )
    built_at = models.DateTimeField(default=timezone.now)
    hits = models.PositiveIntegerField(default=0)
    last_hit_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "context cache entries"
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "policy_hash", "profile"], name="context_cache_unique"
            )
        ]

    def __str__(self):
        return f"cache c:{self.conversation_id} {self.policy_hash}/{self.profile}"


class TopicStatus(models.TextChoices):
    ACTIVE = "active"
    PARKED = "parked"


class ConversationTopic(models.Model):
    """A topic of one conversation's working set: what it is about now (active) or was about
    and may come back to (parked). Refreshed in the background after messages."""

    conversation = models.ForeignKey("Conversation", on_delete=models.CASCADE, related_name="topics")
    label = models.CharField(max_length=120)
    terms = models.JSONField(default=list, blank=True, help_text="the words that identify it")
    status = models.CharField(max_length=10, choices=TopicStatus.choices, default=TopicStatus.ACTIVE)
    weight = models.FloatField(default=0.0)
    mentions = models.PositiveIntegerField(default=0)
    first_message_id = models.BigIntegerField(default=0)
    last_message_id = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "label"], name="conversation_topic_unique")
        ]
        indexes = [models.Index(fields=["conversation", "status"], name="conversation_topic_status")]

    def __str__(self):
        return f"{self.status} topic {self.label}"


class ContextDelivery(models.Model):
    """The digest of each context block a conversation last received (for `unchanged`)."""

    conversation = models.ForeignKey("Conversation", on_delete=models.CASCADE, related_name="+")
    block = models.CharField(max_length=40)
    digest = models.CharField(max_length=64)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "context deliveries"
        constraints = [
            models.UniqueConstraint(fields=["conversation", "block"], name="context_delivery_unique")
        ]

    def __str__(self):
        return f"c:{self.conversation_id} {self.block}"


class ActorKind(models.TextChoices):
    API_KEY = "api_key"
    USER = "user"
    TASK = "task"
    SYSTEM = "system"


class AuditEvent(models.Model):
    """Who changed or deleted what, from where. Survives the deletion of what it describes."""

    app = models.ForeignKey(App, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    subject = models.ForeignKey(Subject, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_kind = models.CharField(max_length=20, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=200, blank=True)
    action = models.CharField(max_length=60)
    object_kind = models.CharField(max_length=40, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["app", "created_at"], name="audit_recent")]

    def __str__(self):
        return f"{self.actor_kind}:{self.actor_id} {self.action} {self.object_kind}:{self.object_id}"


class Policy(models.TextChoices):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class ConsentCategory(models.Model):
    """A kind of sensitive memory (seeded by a data migration); `slug` is what items carry."""

    slug = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=80)
    description = models.TextField(help_text="Plain-language description shown to the person.")
    default_policy = models.CharField(max_length=10, choices=Policy.choices, default=Policy.ASK)

    class Meta:
        verbose_name_plural = "consent categories"
        ordering = ["name"]

    def __str__(self):
        return self.name


class SubjectConsent(models.Model):
    """The person's own policy for one category (absent: the category's default)."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="consents")
    category = models.ForeignKey(ConsentCategory, on_delete=models.CASCADE, related_name="+")
    policy = models.CharField(max_length=10, choices=Policy.choices)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subject", "category"], name="subject_consent_unique")]

    def __str__(self):
        return f"{self.subject}: {self.category.slug}={self.policy}"


class PendingStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


class PendingMemory(models.Model):
    """A candidate fact or note in a sensitive category, waiting for the person's decision."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="pending")
    kind = models.CharField(max_length=10, choices=ItemKind.choices)
    payload = models.JSONField(help_text="What would be stored: key/value/… or content/tags/…")
    category = models.ForeignKey(ConsentCategory, on_delete=models.PROTECT, related_name="+")
    content_hash = models.CharField(max_length=64, help_text="So a rejected item is not asked again.")
    source_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=10, choices=PendingStatus.choices, default=PendingStatus.PENDING)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=200, blank=True)
    result_id = models.BigIntegerField(
        null=True, blank=True, help_text="The fact or note written on approval."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "pending memories"
        indexes = [models.Index(fields=["subject", "status", "created_at"], name="pending_queue")]
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "content_hash"],
                condition=Q(status="pending"),
                name="pending_once",
            )
        ]

    def __str__(self):
        return f"{self.kind} in {self.category.slug} ({self.status})"


class TextJSONEncoder(json.JSONEncoder):
    """Writes non-ASCII text as itself, not as \\u escapes, so that the SQLite full-text index
    over a JSON column (procedure steps, lesson tags) sees the words ("café", not "caf u00e9")."""

    def __init__(self, *args, **kwargs):
        kwargs["ensure_ascii"] = False
        super().__init__(*args, **kwargs)


class Lesson(models.Model):
    """A 1–3 sentence principle distilled from a cluster of notes (its `consolidated_notes`).

    Content is append-only like a note's: an edit writes a LessonVersion, so the text a lesson
    had before stays readable.
    """

    MAX_SENTENCES = 3

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="lessons")
    text = models.TextField()
    tags = models.JSONField(default=list, blank=True, encoder=TextJSONEncoder)
    vote_score = models.FloatField(default=0.0)
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.TASK)
    distiller = models.CharField(
        max_length=120,
        blank=True,
        help_text='"heuristic", or the model that wrote it ("openai/gpt-4o-mini").',
    )
    parked_at = models.DateTimeField(
        null=True, blank=True, help_text="Parked by the person: kept, never in any context or search."
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["subject", "created_at"], name="lesson_recent")]

    def __str__(self):
        return f"l:{self.pk} {self.text[:40]}"


class LessonVersion(models.Model):
    """Every version of a lesson's text and tags, including the first."""

    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    text = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.TASK)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["lesson", "version"], name="lesson_version_unique")]
        ordering = ["version"]

    def __str__(self):
        return f"l:{self.lesson_id} v{self.version}"


class Procedure(models.Model):
    """A title and 2–8 plain-text steps distilled from notes that describe a way of doing
    something. The steps are advice a person reads: nothing ever executes them.

    Edits write a ProcedureVersion, like lessons.
    """

    MIN_STEPS = 2
    MAX_STEPS = 8

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="procedures")
    lesson = models.ForeignKey(
        Lesson,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="procedures",
        help_text="The lesson distilled from the same cluster of notes.",
    )
    title = models.CharField(max_length=200)
    steps = models.JSONField(
        default=list, encoder=TextJSONEncoder, help_text="2–8 plain-text steps, in order."
    )
    tags = models.JSONField(default=list, blank=True, encoder=TextJSONEncoder)
    vote_score = models.FloatField(default=0.0)
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.TASK)
    distiller = models.CharField(max_length=120, blank=True)
    parked_at = models.DateTimeField(
        null=True, blank=True, help_text="Parked by the person: kept, never in any context or search."
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["subject", "created_at"], name="procedure_recent")]

    def __str__(self):
        return f"p:{self.pk} {self.title[:40]}"


class ProcedureVersion(models.Model):
    """Every version of a procedure's title and steps, including the first."""

    procedure = models.ForeignKey(Procedure, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    title = models.CharField(max_length=200)
    steps = models.JSONField(default=list)
    tags = models.JSONField(default=list, blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.TASK)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["procedure", "version"], name="procedure_version_unique")
        ]
        ordering = ["version"]

    def __str__(self):
        return f"p:{self.procedure_id} v{self.version}"


class Embedding(models.Model):
    """One item's vector under one embedding model (float32, little-endian, L2-normalised).

    `content_sha256` is the hash of the text that was embedded, so a re-embed skips items whose
    text did not change. A changed vector is written as a new row (delete + insert), so the
    subject's newest id changes with every write: the search cache in memory.search.vectors
    relies on that. The vec0 index (SQLite) or the pgvector table (PostgreSQL) is kept beside
    this table by memory.search.vectors.
    """

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="embeddings")
    kind = models.CharField(max_length=20, choices=ItemKind.choices, default=ItemKind.NOTE)
    item_id = models.BigIntegerField()
    model_id = models.CharField(max_length=200, help_text='e.g. "local/all-MiniLM-L6-v2".')
    dim = models.PositiveIntegerField()
    vector = models.BinaryField()
    content_sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "item_id", "model_id"], name="embedding_unique_item_model"
            )
        ]
        # with the id: a subject's newest vector is one index lookup (memory.search.vectors)
        indexes = [models.Index(fields=["subject", "model_id", "kind", "id"], name="embedding_subject_model")]

    def __str__(self):
        return f"{self.kind}:{self.item_id} @ {self.model_id}"


class SessionExtraction(models.Model):
    """Phase 1 of the session-summary pipeline (chat/summaries/): what one conversation left
    worth keeping, as a raw memory block (Markdown, sections of chat/summaries/blocks.py) and a
    short synopsis. One row per conversation, rewritten when the conversation has new messages
    past `watermark_message_id` (the last message it covers)."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="session_extractions")
    conversation = models.OneToOneField(Conversation, on_delete=models.CASCADE, related_name="extraction")
    scope = models.CharField(max_length=200, blank=True, default="", help_text="The conversation's.")
    working_dir = models.CharField(max_length=500, blank=True, default="")
    watermark_message_id = models.BigIntegerField(help_text="The last message this extraction covers.")
    message_count = models.PositiveIntegerField(default=0)
    title = models.CharField(max_length=200, blank=True, default="")
    synopsis = models.TextField(blank=True, default="")
    raw_memory = models.TextField(blank=True, default="")
    method = models.CharField(
        max_length=200, help_text='"heuristic" or the model, e.g. "openai/gpt-4o-mini".'
    )
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    last_message_at = models.DateTimeField(help_text="When the conversation's last covered message happened.")
    run = models.ForeignKey(JobRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["subject", "scope", "last_message_at"], name="extraction_subject_scope")
        ]

    def __str__(self):
        return f"extraction c:{self.conversation_id} @ m:{self.watermark_message_id}"


class DocumentKind(models.TextChoices):
    MEMORY = "memory", "MEMORY.md"
    SUMMARY = "summary", "memory_summary.md"
    SKILL = "skill", "skill"
    MENTAL_MODEL = "mental_model", "mental model"


class MemoryDocument(models.Model):
    """A versioned Markdown artefact of the session-summary pipeline, addressed as
    memory://root/<path> (scope "") or memory://scope/<scope>/<path>: `MEMORY.md`,
    `memory_summary.md`, `skills/<name>/SKILL.md`, `mental_models/<name>.md`. Its content is
    its `current` version; every write that changes it adds a MemoryDocumentVersion. A pruned
    skill keeps its history (`pruned_at`) and is neither listed nor injected."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(max_length=20, choices=DocumentKind.choices)
    scope = models.CharField(max_length=200, blank=True, default="", help_text='"" = the whole subject.')
    path = models.CharField(
        max_length=300, help_text='e.g. "MEMORY.md", "skills/release-checklist/SKILL.md".'
    )
    name = models.CharField(
        max_length=100, blank=True, default="", help_text="A skill's or mental model's name."
    )
    description = models.TextField(
        blank=True, default="", help_text="What a mental model models; when to use a skill."
    )
    auto_refresh = models.BooleanField(default=False, help_text="Mental models: refreshed by every run.")
    builtin = models.BooleanField(default=False, help_text="Mental models: one of the seeded set.")
    current = models.ForeignKey(
        "MemoryDocumentVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    pruned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subject", "scope", "path"], name="document_unique_path")
        ]
        indexes = [models.Index(fields=["subject", "kind"], name="document_subject_kind")]

    def __str__(self):
        return self.url

    @property
    def url(self) -> str:
        from memory.documents import document_url  # the one place addresses are spelled

        return document_url(self.scope, self.path)


class MemoryDocumentVersion(models.Model):
    document = models.ForeignKey(MemoryDocument, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.TextField(blank=True, default="")
    digest = models.CharField(max_length=64, help_text="sha256 of the content.")
    method = models.CharField(max_length=200, blank=True, default="", help_text='"heuristic" or the model.')
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    run = models.ForeignKey(JobRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["document", "number"], name="document_version_unique")]
        ordering = ["number"]

    def __str__(self):
        return f"{self.document} v{self.number}"


# --- beliefs and the person (issue 13) ---------------------------------------------------------


class RevisionAction(models.TextChoices):
    """What new evidence does to an existing belief (memory/beliefs/)."""

    REINFORCE = "REINFORCE"  # the same again: more confirmations, more confidence
    WEAKEN = "WEAKEN"  # doubt: less confidence, the value stays
    SUPERSEDE = "SUPERSEDE"  # a correction: the new value replaces the old one
    SPLIT_BY_MODE = "SPLIT_BY_MODE"  # both hold, each in its own assistant mode
    SPLIT_BY_SCOPE = "SPLIT_BY_SCOPE"  # both hold, each in its own scope (project)
    SPLIT_BY_TIME = "SPLIT_BY_TIME"  # a change in the world: the old held until now, the new from now
    MARK_EXCEPTION = "MARK_EXCEPTION"  # the belief holds, with this one exception
    ARCHIVE = "ARCHIVE"  # the belief no longer holds and nothing replaces it


class BeliefRevision(models.Model):
    """One revision of a belief (a profile fact or a note) by new evidence, with why. The rows
    it touched keep their history: a revision never deletes a version."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="revisions")
    action = models.CharField(max_length=20, choices=RevisionAction.choices)
    belief_kind = models.CharField(max_length=20, choices=ItemKind.choices, help_text="fact or note")
    belief_id = models.BigIntegerField(help_text="the version the new evidence bore on")
    result_ids = models.JSONField(
        default=list, blank=True, help_text="the rows the revision wrote or changed, of belief_kind"
    )
    message = models.ForeignKey(
        "Message",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the message carrying the new evidence (its Evidence unit is the citation)",
    )
    claim = models.JSONField(
        default=dict, blank=True, help_text="the new evidence's claim: key/value/mode/scope or content"
    )
    signals = models.JSONField(
        default=list,
        blank=True,
        help_text='what detection found: "same_key", "contradicts_link", "negation", "number", "place", "date", …',
    )
    reason = models.TextField(help_text="why this action, in plain words")
    decided_by = models.CharField(
        max_length=20, default="rules", help_text='"rules", "llm", "person" or "feedback"'
    )
    before = models.JSONField(default=dict, blank=True, help_text="the belief as it was")
    after = models.JSONField(default=dict, blank=True, help_text="what the revision left")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["subject", "-created_at"], name="revision_recent"),
            models.Index(fields=["belief_kind", "belief_id"], name="revision_belief"),
        ]

    def __str__(self):
        return f"{self.action} {self.belief_kind}:{self.belief_id}"


class InteractionContract(models.Model):
    """How this person likes to work in one assistant mode, learned from observation and
    correctable by them. `dimensions` maps depth, directness, pushback and pace to
    {"value", "score", "confidence", "evidence", "source", "reason", "updated_at"}
    (memory/person/contract.py)."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="contracts")
    mode = models.CharField(max_length=50, help_text="the assistant mode it holds in")
    dimensions = models.JSONField(default=dict, blank=True)
    observations = models.PositiveIntegerField(default=0, help_text="messages it learned from")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subject", "mode"], name="contract_unique")]

    def __str__(self):
        return f"contract s:{self.subject_id} {self.mode}"


class ConversationState(models.Model):
    """The person's transient state in one conversation — urgency, focus, frustration, each
    0..1 as last updated; readers decay them with the time since (memory/person/state.py)."""

    conversation = models.OneToOneField("Conversation", on_delete=models.CASCADE, related_name="state")
    urgency = models.FloatField(default=0.0)
    focus = models.FloatField(default=0.0)
    frustration = models.FloatField(default=0.0)
    signals = models.JSONField(default=list, blank=True, help_text="what moved them, newest first")
    last_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    messages = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"state c:{self.conversation_id}"


class Outcome(models.TextChoices):
    SUCCESS = "success"
    FAILURE = "failure"


class Consequence(models.Model):
    """A consequence chain: advice given (action) → what came of it (outcome) → what that says
    about this person's setting (tendency), linked to the advice turn and the report."""

    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="consequences")
    conversation = models.ForeignKey(
        "Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    advice_message = models.ForeignKey(
        "Message",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the assistant turn whose advice it was",
    )
    outcome_message = models.ForeignKey(
        "Message",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the person's report of what came of it",
    )
    action = models.TextField(help_text="the advice, in short")
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    outcome_text = models.TextField(help_text="what came of it, in short")
    tendency = models.TextField(blank=True, help_text='what it says, e.g. "fragile to sweeping changes"')
    mode = models.CharField(max_length=50, blank=True, default="")
    scope = models.CharField(max_length=200, blank=True, default="")
    confidence = models.FloatField(default=0.6)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.REFLECTION)
    surfaced_count = models.PositiveIntegerField(default=0)
    last_surfaced_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["subject", "-created_at"], name="consequence_recent")]
        constraints = [
            models.UniqueConstraint(
                fields=["advice_message", "outcome_message"],
                condition=Q(advice_message__isnull=False, outcome_message__isnull=False),
                name="consequence_once_per_report",
            )
        ]

    def __str__(self):
        return f"{self.outcome}: {self.action[:40]}"


class AdminKey(models.Model):
    """An operator's key for /api/v1/admin/: `Authorization: Bearer mwa_<prefix>_<secret>`.
    Apart from the apps' keys (an app key never reaches an admin route, nor this key an app's
    endpoint); only a SHA-256 of the secret is stored, the key is shown once."""

    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"admin:{self.prefix}"

    hash_secret = staticmethod(key_secret_hash)


class MetricSnapshot(models.Model):
    """One computation of the service's metrics (per App, or of every App when `app` is empty):
    what `POST /api/v1/admin/metrics` computed, kept for `latest` and `history`."""

    app = models.ForeignKey(App, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    computed_at = models.DateTimeField(default=timezone.now)
    data = models.JSONField(default=dict)

    class Meta:
        indexes = [models.Index(fields=["app", "-computed_at"], name="metric_recent")]

    def __str__(self):
        return f"metrics {self.computed_at:%Y-%m-%d %H:%M}"
