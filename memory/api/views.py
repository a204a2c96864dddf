"""The memory endpoints of the REST sidecar: context, profile facts, notes, votes."""

import time

from django.core.validators import RegexValidator
from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import (
    AppAPIView,
    StrictQuerySerializer,
    StrictSerializer,
    item_ref_validator,
    parse_item_ref,
)
from memory.api.fields import (
    ModeNameField,
    ProfileField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictDateTimeField,
    StrictFloatField,
    StrictIntegerField,
    StrictListField,
    SubjectField,
    TagField,
)
from memory.api.schema import error_response
from memory.api.timing import ServerTimingMixin
from memory.beliefs import LAYERS
from memory.context import context_build
from memory.models import Conversation, Signal
from memory.modes import mode_get
from memory.profiles import profile_check
from memory.search.lexical import NoteFilter
from memory.selectors import (
    conversations_with_pause,
    fact_history,
    fact_list,
    message_get,
    note_get,
    note_recall,
    note_versions,
    paused_subject,
)
from memory.services import (
    fact_remove,
    item_park,
    note_edit,
    note_forget,
    note_store,
    notes_mark_recalled,
    vote_cast,
)
from memory.services.beliefs import fact_set_by_person
from memory.services.facts import KEY_MESSAGE, KEY_RE, fact_active
from memoryweb.errors import InvalidInput, NotFound
from memoryweb.profiles import PROFILES

# --- output shapes ------------------------------------------------------------------------
PARKED_OUT = "when the person parked it (kept, never in any context, search or tool); null: not parked"
PARKED_IN = "true parks it (kept, never in any context, search or tool), false unparks it"


class FactOut(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    value = serializers.CharField()
    pinned = serializers.BooleanField()
    keywords = serializers.ListField(child=serializers.CharField())
    mode = serializers.CharField()
    scope = serializers.CharField()
    confidence = serializers.FloatField()
    confirmations = serializers.IntegerField()
    vote_score = serializers.FloatField()
    category = serializers.CharField()
    origin = serializers.CharField()
    valid_from = serializers.DateTimeField()
    valid_to = serializers.DateTimeField(allow_null=True)
    parked_at = serializers.DateTimeField(allow_null=True, help_text=PARKED_OUT)
    recorded_at = serializers.DateTimeField(source="created_at")
    superseded_by = serializers.IntegerField(source="superseded_by_id", allow_null=True)
    active = serializers.BooleanField(source="is_active")


class NoteOut(serializers.Serializer):
    id = serializers.IntegerField()
    content = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    mode = serializers.CharField(help_text='the assistant mode it renders in only; "" = every mode')
    scope = serializers.CharField()
    working_dir = serializers.CharField()
    conversation = serializers.IntegerField(source="conversation_id", allow_null=True)
    source_message = serializers.IntegerField(source="source_message_id", allow_null=True)
    occurred_at = serializers.DateTimeField(allow_null=True)
    vote_score = serializers.FloatField()
    recall_count = serializers.IntegerField()
    last_recalled_at = serializers.DateTimeField(allow_null=True)
    archived_at = serializers.DateTimeField(allow_null=True)
    parked_at = serializers.DateTimeField(allow_null=True, help_text=PARKED_OUT)
    category = serializers.CharField()
    origin = serializers.CharField()
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class NoteVersionOut(serializers.Serializer):
    version = serializers.IntegerField()
    content = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    origin = serializers.CharField()
    created_at = serializers.DateTimeField()


class NoteSourceOut(serializers.Serializer):
    conversation = serializers.IntegerField(source="conversation_id", allow_null=True)
    message = serializers.IntegerField(source="message_id", allow_null=True)
    created_at = serializers.DateTimeField()


class NoteRecalledOut(NoteOut):
    score = serializers.FloatField(help_text="how well it matched the query")


class NoteListOut(serializers.Serializer):
    notes = NoteRecalledOut(many=True)


class NoteStoredOut(NoteOut):
    merged = serializers.BooleanField(help_text="true: merged into this existing near-duplicate")


class NoteDetailOut(NoteOut):
    versions = NoteVersionOut(many=True)
    sources = NoteSourceOut(many=True)


class FactListOut(serializers.Serializer):
    facts = FactOut(many=True)


class FactHistoryOut(serializers.Serializer):
    key = serializers.CharField()
    versions = FactOut(many=True)


class VoteOut(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.CharField()
    signal = serializers.ChoiceField(choices=Signal.choices)
    mode = serializers.CharField(help_text='the assistant mode the signal was given in; "" = none')
    delta = serializers.FloatField()
    score = serializers.FloatField(help_text="the item's new vote score")


class ContextBlockOut(serializers.Serializer):
    name = serializers.CharField(
        help_text="stable_prefix, profile, recalled, memory-index, lessons, procedures, "
        "mental_models (memory.backend local), topics, transcript (recentTranscript.enabled)"
    )
    text = serializers.CharField(allow_null=True, help_text="null when unchanged for this conversation")
    tokens = serializers.IntegerField()
    cap = serializers.IntegerField()
    unchanged = serializers.BooleanField()
    digest = serializers.CharField(help_text="SHA-256 of the text")
    omitted = serializers.IntegerField(
        help_text="matching items the block's caps left out; its text then ends with a line such "
        "as '(3 more notes not shown)'"
    )


class ContextItemApplicabilityOut(serializers.Serializer):
    """How the selection scored one item (memory/ranking/applicability.py; docs/modes.md)."""

    task_fit = serializers.FloatField(help_text="does it answer or serve this message (0–1)")
    mode_fit = serializers.FloatField(help_text="does this kind belong in this mode (0–1)")
    temporal = serializers.FloatField(help_text="still valid now: lower for a past plan (0–1)")
    epistemic = serializers.FloatField(help_text="confidence, confirmations, origin (0–1)")
    risk = serializers.FloatField(help_text="1 when it matters for safety in this message")
    applicability = serializers.FloatField(help_text="temporal × epistemic × max(fit, risk)")
    retrieval = serializers.FloatField(help_text="the ranker's score ÷ the best of its list")
    vitality = serializers.FloatField(help_text="recency, recalls and votes (0–1)")
    confirmation = serializers.FloatField(help_text="confirmations and votes (0–1)")
    privacy_penalty = serializers.FloatField()
    contradiction_penalty = serializers.FloatField()
    intrusive_penalty = serializers.FloatField(
        help_text='feedback.intrusivePenalty per "intrusive" signal the item got in this mode (capped)'
    )
    final = serializers.FloatField(help_text="the weighted sum less the penalties: the item's score")
    judge = serializers.ChoiceField(choices=["heuristic", "llm"], help_text="who judged the sub-scores")


class ContextItemOut(serializers.Serializer):
    id = serializers.CharField(help_text="f:3 fact, n:12 note, e:7 evidence, l:4 lesson, p:5 procedure")
    kind = serializers.CharField()
    layer = serializers.ChoiceField(
        choices=list(LAYERS),
        help_text="evidence (e: turns), belief (f: facts, n: notes) or summary (l: lessons, "
        "p: procedures): never established fact",
    )
    section = serializers.CharField()
    score = serializers.FloatField(help_text="the selection's final score (applicability.final)")
    applicability = ContextItemApplicabilityOut()
    reason = serializers.CharField()
    tokens = serializers.IntegerField()
    expanded = serializers.BooleanField(help_text="reached over a link")
    source = serializers.DictField(  # type: ignore[assignment]  # the JSON key, not Field.source
        required=False, help_text="notes: message_id, conversation_id"
    )
    mirror_of = serializers.CharField(
        required=False,
        help_text="mirror retrieval: the doubtful or contested belief (f:ID, n:ID) this evidence "
        "unit was brought in for; it carries that belief's score and breakdown",
    )


class ContextSummaryOut(serializers.Serializer):
    url = serializers.CharField(help_text="memory://root, or memory://scope/<project>")
    version = serializers.IntegerField(help_text="the summary version the stable prefix carries")
    pinned = serializers.BooleanField(
        help_text="the conversation keeps this version until it asks for a memory reload"
    )


class ContextOut(serializers.Serializer):
    enabled = serializers.BooleanField()
    stable_prefix = serializers.CharField(allow_blank=True)
    tail = serializers.CharField(allow_blank=True)
    summary = ContextSummaryOut(
        allow_null=True, help_text="the session summary in the stable prefix; null without one"
    )
    blocks = ContextBlockOut(many=True)
    unchanged = serializers.BooleanField()
    items = ContextItemOut(many=True)
    tokens = serializers.DictField(child=serializers.IntegerField(), help_text="per block, and total")
    query = serializers.CharField()
    rewritten_query = serializers.CharField()
    retrieval_event_id = serializers.IntegerField(allow_null=True)
    latency_ms = serializers.FloatField()
    mode = serializers.CharField(help_text="the assistant mode the context was built in")
    profile = serializers.ChoiceField(choices=list(PROFILES), help_text="the operational profile")
    policy_hash = serializers.CharField(help_text="digest of the mode manifest and configuration in force")
    from_cache = serializers.BooleanField(help_text="served from the adaptive context cache")
    staleness = serializers.FloatField(
        help_text="0 for a fresh build; for a cache hit, how far the conversation moved since (0..1)"
    )


def note_detail(note) -> dict:
    data = NoteOut(note).data
    data["versions"] = NoteVersionOut(note_versions(note=note), many=True).data
    data["sources"] = NoteSourceOut(note.sources.order_by("created_at", "id"), many=True).data
    return data


# --- context ------------------------------------------------------------------------------
class ContextApi(ServerTimingMixin, AppAPIView):
    class InputSerializer(StrictSerializer):
        subject = SubjectField()
        message = StrictCharField(max_length=20_000, trim_whitespace=True)
        conversation = StrictIntegerField(required=False, min_value=1)
        k = StrictIntegerField(required=False, min_value=1, max_value=50)
        full = StrictBooleanField(required=False, default=False)
        mode = ModeNameField(
            help_text="build in this assistant mode instead of the conversation's; \"\" = the conversation's"
        )
        profile = ProfileField()

    @extend_schema(
        request=InputSerializer, responses={200: ContextOut}, summary="Build the memory context for a message"
    )
    def post(self, request):
        started = time.perf_counter()
        data = self.validated(self.InputSerializer, request.data)
        profile = profile_check(data["profile"], self.config)
        mode = mode_get(data["mode"]) if data.get("mode") else None
        # the common case, a known conversation of a known subject, in one query (its subject
        # comes with it); anything else takes the lookups below, which name what is missing
        conversation = (
            conversations_with_pause(
                Conversation.objects.select_related("subject").filter(
                    pk=data["conversation"], subject__app=self.app, subject__external_id=data["subject"]
                ),
                app=self.app,
            ).first()
            if "conversation" in data
            else None
        )
        if conversation is not None:
            subject = paused_subject(conversation).subject
            self.subject_check(subject)
        else:
            try:
                # a known subject is only read: on SQLite transaction.atomic() takes the write lock
                # at BEGIN, and every context build would queue behind the writers (ingest, reflection)
                subject = self.subject(data["subject"])
            except NotFound:
                subject = None
            if subject is not None:
                conversation = (
                    self.conversation(data["conversation"], subject=subject)
                    if "conversation" in data
                    else None
                )
            else:
                with transaction.atomic():  # a refused conversation leaves no new subject behind
                    subject = self.subject(data["subject"], create=True)
                    conversation = (
                        self.conversation(data["conversation"], subject=subject)
                        if "conversation" in data
                        else None
                    )
        lookedup = self.timing_add("lookup", started)
        # built outside that transaction: on SQLite it would hold the write lock for the whole
        # build, and the LLM rewriter's worker thread (which counts its calls) would wait on it
        context = context_build(
            subject=subject,
            message=data["message"],
            config=self.config,
            conversation=conversation,
            k=data.get("k"),
            mode=mode,
            profile=profile,
        )
        built = time.perf_counter()
        build_ms = (built - lookedup) * 1000
        writes_ms = max(0.0, build_ms - (context.latency_ms or build_ms))
        self.timings.update(build=build_ms - writes_ms, event=writes_ms)
        body = context.as_dict(full=data["full"])
        self.timing_add("serialise", built)
        return Response(body)


# --- profile ------------------------------------------------------------------------------
class ProfileApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        key = StrictCharField(max_length=100, validators=[RegexValidator(KEY_RE, message=KEY_MESSAGE)])
        value = StrictCharField(max_length=2000)
        pinned = StrictBooleanField(required=False, default=True)
        keywords = StrictListField(child=StrictCharField(max_length=60), required=False, max_length=16)
        mode = ModeNameField(help_text='holds only in this assistant mode; "" = every mode')
        scope = StrictCharField(required=False, allow_blank=True, max_length=200, default="")
        confidence = StrictFloatField(required=False, min_value=0.0, max_value=1.0, default=1.0)

        # fact_set(): a contextual (unpinned) fact needs a keyword
        schema_rules = {
            "anyOf": [
                {"not": {"required": ["pinned"]}},
                {"properties": {"pinned": {"enum": [True]}}},
                {"required": ["keywords"], "properties": {"keywords": {"minItems": 1}}},
            ]
        }

    @extend_schema(responses={200: FactListOut}, summary="List active facts")
    def get(self, request, subject):
        facts = fact_list(subject=self.subject(subject))
        return Response({"facts": FactOut(facts, many=True).data})

    @extend_schema(request=InputSerializer, responses={201: FactOut, 200: FactOut}, summary="Set a fact")
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        # an explicit set is the person's revision: the same value REINFORCEs, a new one
        # SUPERSEDEs the value of its own mode and scope (a first value is simply stored)
        fact, changed = fact_set_by_person(
            subject=self.subject(subject, create=True), actor=self.actor, config=self.config, **data
        )
        return Response(FactOut(fact).data, status=status.HTTP_201_CREATED if changed else status.HTTP_200_OK)


SCOPE_PARAMS = [
    OpenApiParameter("mode", str, required=False),
    OpenApiParameter("scope", str, required=False),
]


class ProfileKeyApi(AppAPIView):
    class ParkSerializer(StrictSerializer):
        parked = StrictBooleanField(help_text=PARKED_IN)

    @extend_schema(
        parameters=SCOPE_PARAMS,
        request=ParkSerializer,
        responses={200: FactOut},
        summary="Park or unpark a fact",
    )
    @transaction.atomic  # fact_active locks the active version until the park is written
    def patch(self, request, subject, key):
        data = self.validated(self.ParkSerializer, request.data)
        fact = fact_active(
            self.subject(subject),
            key,
            request.query_params.get("mode", ""),
            request.query_params.get("scope", ""),
        )
        if fact is None:
            raise NotFound(f"no active fact {key!r}", field="key")
        item_park(item=fact, parked=data["parked"], actor=self.actor)
        return Response(FactOut(fact).data)

    @extend_schema(parameters=SCOPE_PARAMS, responses={200: FactOut}, summary="Remove a fact (history stays)")
    def delete(self, request, subject, key):
        fact = fact_remove(
            subject=self.subject(subject),
            key=key,
            mode=request.query_params.get("mode", ""),
            scope=request.query_params.get("scope", ""),
            actor=self.actor,
        )
        return Response(FactOut(fact).data)


class ProfileHistoryApi(AppAPIView):
    @extend_schema(responses={200: FactHistoryOut}, summary="Every version of a fact")
    def get(self, request, subject, key):
        facts = fact_history(subject=self.subject(subject), key=key)
        return Response({"key": key, "versions": FactOut(facts, many=True).data})


# --- notes --------------------------------------------------------------------------------
class NotesApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        content = StrictCharField(trim_whitespace=True)
        tags = StrictListField(child=TagField(), required=False)
        conversation = StrictIntegerField(required=False, min_value=1)
        message = StrictIntegerField(required=False, min_value=1)
        occurred_at = StrictDateTimeField(required=False)
        mode = ModeNameField(help_text='renders only in this assistant mode; "" = every mode')

        def to_internal_value(self, data):
            for runtime_field in ("scope", "working_dir"):
                if isinstance(data, dict) and runtime_field in data:
                    raise serializers.ValidationError(
                        {runtime_field: ["is set from the conversation, not by the caller"]}
                    )
            return super().to_internal_value(data)

    class QuerySerializer(StrictQuerySerializer):
        query = StrictCharField(required=False, allow_blank=True, max_length=20_000, default="")
        k = StrictIntegerField(
            required=False, min_value=1, max_value=100, help_text="default: memory.notes.recallDefaultK"
        )
        scope = StrictCharField(required=False, allow_blank=True, max_length=200)
        working_dir = StrictCharField(required=False, allow_blank=True, max_length=500)
        tags = StrictCharField(required=False, allow_blank=True)
        archived = StrictBooleanField(required=False, default=False)

    @extend_schema(
        parameters=[QuerySerializer],
        responses={200: NoteListOut},
        summary="Recall notes",
        operation_id="notes_recall",
    )
    def get(self, request, subject):
        params = self.validated(self.QuerySerializer, request.query_params)
        filters = NoteFilter(
            scope=params.get("scope"),
            working_dir=params.get("working_dir"),
            tags=[t.strip().lower() for t in params.get("tags", "").split(",") if t.strip()],
            include_archived=params["archived"],
        )
        results = note_recall(
            subject=self.subject(subject),
            query=params["query"],
            k=params.get("k") or self.config["notes.recallDefaultK"],
            filters=filters,
        )
        notes_mark_recalled(note_ids=[note.pk for note, _ in results])
        payload = []
        for note, score in results:
            item = NoteOut(note).data
            item["score"] = round(score, 4)
            payload.append(item)
        return Response({"notes": payload})

    @extend_schema(
        request=InputSerializer, responses={201: NoteStoredOut, 200: NoteStoredOut}, summary="Store a note"
    )
    @transaction.atomic  # a refused conversation or message leaves no new subject behind
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        subj = self.subject(subject, create=True)
        conversation = (
            self.conversation(data["conversation"], subject=subj) if "conversation" in data else None
        )
        message = None
        if "message" in data:
            message = message_get(app=self.app, message_id=data["message"], subject=subj)
        note, created = note_store(
            subject=subj,
            content=data["content"],
            tags=data.get("tags"),
            conversation=conversation,
            source_message=message,
            occurred_at=data.get("occurred_at"),
            mode=data["mode"],
            actor=self.actor,
            config=self.config,
        )
        body = NoteOut(note).data
        body["merged"] = not created
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class NoteApi(AppAPIView):
    class EditSerializer(StrictSerializer):
        min_fields = 1

        content = StrictCharField(required=False, trim_whitespace=True)
        tags = StrictListField(child=TagField(), required=False)
        parked = StrictBooleanField(required=False, help_text=PARKED_IN)

    @extend_schema(responses={200: NoteDetailOut}, summary="Read a note by id (archived ones too)")
    def get(self, request, subject, note_id):
        note = note_get(subject=self.subject(subject), note_id=note_id)
        notes_mark_recalled(note_ids=[note.pk])
        note.refresh_from_db()
        return Response(note_detail(note))

    @extend_schema(
        request=EditSerializer,
        responses={200: NoteDetailOut},
        summary="Edit a note (a new version), or park or unpark it",
    )
    @transaction.atomic  # an edit and a park in one request: both or neither
    def patch(self, request, subject, note_id):
        data = self.validated(self.EditSerializer, request.data)
        if not data:
            raise InvalidInput("give content, tags or parked to change", field="content")
        parked = data.pop("parked", None)
        note = note_get(subject=self.subject(subject), note_id=note_id)
        if data:
            note = note_edit(note=note, actor=self.actor, config=self.config, **data)
        if parked is not None:
            item_park(item=note, parked=parked, actor=self.actor)
        return Response(note_detail(note))

    @extend_schema(responses={204: None}, summary="Forget a note")
    def delete(self, request, subject, note_id):
        note = note_get(subject=self.subject(subject), note_id=note_id)
        note_forget(note=note, actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- votes --------------------------------------------------------------------------------
class VotesApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        item = StrictCharField(
            help_text="n:ID note, f:ID fact, l:ID lesson, p:ID procedure", validators=[item_ref_validator]
        )
        signal = StrictChoiceField(choices=Signal.choices)
        mode = ModeNameField(
            help_text='the assistant mode the signal was given in ("intrusive" lowers the item '
            'in that mode); "" = none'
        )

    @extend_schema(
        request=InputSerializer,
        responses={201: VoteOut, 409: error_response(409)},
        summary="Vote or give feedback on an item",
    )
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        kind, item_id = parse_item_ref(data["item"])
        event, score = vote_cast(
            subject=self.subject(subject),
            item_kind=kind,
            item_id=item_id,
            signal=data["signal"],
            actor=self.actor,
            config=self.config,
            mode=data["mode"],
        )
        return Response(
            {
                "id": event.pk,
                "item": data["item"],
                "signal": event.signal,
                "mode": event.mode,
                "delta": event.delta,
                "score": score,
            },
            status=status.HTTP_201_CREATED,
        )
