"""The memory endpoints of the REST sidecar: context, profile facts, notes, votes."""

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictSerializer, parse_item_ref
from memory.context import context_build
from memory.search.lexical import NoteFilter
from memory.selectors import fact_history, fact_list, message_get, note_get, note_recall, note_versions
from memory.services import (
    fact_remove,
    fact_set,
    note_edit,
    note_forget,
    note_store,
    notes_mark_recalled,
    vote_cast,
)
from memoryweb.errors import InvalidInput, NotFound


# --- output shapes ------------------------------------------------------------------------
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
    superseded_by = serializers.IntegerField(source="superseded_by_id", allow_null=True)
    active = serializers.BooleanField(source="is_active")


class NoteOut(serializers.Serializer):
    id = serializers.IntegerField()
    content = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    scope = serializers.CharField()
    working_dir = serializers.CharField()
    conversation = serializers.IntegerField(source="conversation_id", allow_null=True)
    source_message = serializers.IntegerField(source="source_message_id", allow_null=True)
    occurred_at = serializers.DateTimeField(allow_null=True)
    vote_score = serializers.FloatField()
    recall_count = serializers.IntegerField()
    last_recalled_at = serializers.DateTimeField(allow_null=True)
    archived_at = serializers.DateTimeField(allow_null=True)
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


def note_detail(note) -> dict:
    data = NoteOut(note).data
    data["versions"] = NoteVersionOut(note_versions(note=note), many=True).data
    data["sources"] = NoteSourceOut(note.sources.order_by("created_at", "id"), many=True).data
    return data


# --- context ------------------------------------------------------------------------------
class ContextApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        subject = serializers.CharField(max_length=200)
        message = serializers.CharField(max_length=20_000, trim_whitespace=True)
        conversation = serializers.IntegerField(required=False, min_value=1)
        k = serializers.IntegerField(required=False, min_value=1, max_value=50)
        full = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        request=InputSerializer, responses={200: dict}, summary="Build the memory context for a message"
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        try:
            # a known subject is only read: on SQLite transaction.atomic() takes the write lock at
            # BEGIN, and every context build would queue behind the writers (ingest, reflection)
            subject = self.subject(data["subject"])
        except NotFound:
            subject = None
        if subject is not None:
            conversation = (
                self.conversation(data["conversation"], subject=subject) if "conversation" in data else None
            )
        else:
            with transaction.atomic():  # a refused conversation leaves no new subject behind
                subject = self.subject(data["subject"], create=True)
                conversation = (
                    self.conversation(data["conversation"], subject=subject)
                    if "conversation" in data
                    else None
                )
        # built outside that transaction: on SQLite it would hold the write lock for the whole
        # build, and the LLM rewriter's worker thread (which counts its calls) would wait on it
        context = context_build(
            subject=subject,
            message=data["message"],
            config=self.config,
            conversation=conversation,
            k=data.get("k"),
        )
        return Response(context.as_dict(full=data["full"]))


# --- profile ------------------------------------------------------------------------------
class ProfileApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        key = serializers.CharField(max_length=100)
        value = serializers.CharField(max_length=2000)
        pinned = serializers.BooleanField(required=False, default=True)
        keywords = serializers.ListField(
            child=serializers.CharField(max_length=60), required=False, max_length=16
        )
        mode = serializers.CharField(required=False, allow_blank=True, max_length=50, default="")
        scope = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
        confidence = serializers.FloatField(required=False, min_value=0.0, max_value=1.0, default=1.0)

    @extend_schema(responses={200: FactOut(many=True)}, summary="List active facts")
    def get(self, request, subject):
        facts = fact_list(subject=self.subject(subject))
        return Response({"facts": FactOut(facts, many=True).data})

    @extend_schema(request=InputSerializer, responses={201: FactOut, 200: FactOut}, summary="Set a fact")
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        fact, changed = fact_set(subject=self.subject(subject, create=True), actor=self.actor, **data)
        return Response(FactOut(fact).data, status=status.HTTP_201_CREATED if changed else status.HTTP_200_OK)


SCOPE_PARAMS = [
    OpenApiParameter("mode", str, required=False),
    OpenApiParameter("scope", str, required=False),
]


class ProfileKeyApi(AppAPIView):
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
    @extend_schema(responses={200: FactOut(many=True)}, summary="Every version of a fact")
    def get(self, request, subject, key):
        facts = fact_history(subject=self.subject(subject), key=key)
        return Response({"key": key, "versions": FactOut(facts, many=True).data})


# --- notes --------------------------------------------------------------------------------
class NotesApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        content = serializers.CharField(trim_whitespace=True)
        tags = serializers.ListField(child=serializers.CharField(max_length=50), required=False)
        conversation = serializers.IntegerField(required=False, min_value=1)
        message = serializers.IntegerField(required=False, min_value=1)
        occurred_at = serializers.DateTimeField(required=False)

        def to_internal_value(self, data):
            for runtime_field in ("scope", "working_dir"):
                if isinstance(data, dict) and runtime_field in data:
                    raise serializers.ValidationError(
                        {runtime_field: ["is set from the conversation, not by the caller"]}
                    )
            return super().to_internal_value(data)

    class QuerySerializer(serializers.Serializer):
        query = serializers.CharField(required=False, allow_blank=True, max_length=20_000, default="")
        k = serializers.IntegerField(
            required=False, min_value=1, max_value=100, help_text="default: memory.notes.recallDefaultK"
        )
        scope = serializers.CharField(required=False, allow_blank=True, max_length=200)
        working_dir = serializers.CharField(required=False, allow_blank=True, max_length=500)
        tags = serializers.CharField(required=False, allow_blank=True)
        archived = serializers.BooleanField(required=False, default=False)

    @extend_schema(parameters=[QuerySerializer], responses={200: NoteOut(many=True)}, summary="Recall notes")
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

    @extend_schema(request=InputSerializer, responses={201: NoteOut, 200: NoteOut}, summary="Store a note")
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
            actor=self.actor,
            config=self.config,
        )
        body = NoteOut(note).data
        body["merged"] = not created
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class NoteApi(AppAPIView):
    class EditSerializer(StrictSerializer):
        content = serializers.CharField(required=False, trim_whitespace=True)
        tags = serializers.ListField(child=serializers.CharField(max_length=50), required=False)

    @extend_schema(responses={200: NoteOut}, summary="Read a note by id (archived ones too)")
    def get(self, request, subject, note_id):
        note = note_get(subject=self.subject(subject), note_id=note_id)
        notes_mark_recalled(note_ids=[note.pk])
        note.refresh_from_db()
        return Response(note_detail(note))

    @extend_schema(request=EditSerializer, responses={200: NoteOut}, summary="Edit a note (a new version)")
    def patch(self, request, subject, note_id):
        data = self.validated(self.EditSerializer, request.data)
        if not data:
            raise InvalidInput("give content or tags to change", field="content")
        note = note_get(subject=self.subject(subject), note_id=note_id)
        note = note_edit(note=note, actor=self.actor, config=self.config, **data)
        return Response(note_detail(note))

    @extend_schema(responses={204: None}, summary="Forget a note")
    def delete(self, request, subject, note_id):
        note = note_get(subject=self.subject(subject), note_id=note_id)
        note_forget(note=note, actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- votes --------------------------------------------------------------------------------
class VotesApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        item = serializers.CharField(help_text="n:ID for a note, f:ID for a fact")
        signal = serializers.CharField()

    @extend_schema(request=InputSerializer, responses={201: dict}, summary="Vote or give feedback on an item")
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
        )
        return Response(
            {
                "id": event.pk,
                "item": data["item"],
                "signal": event.signal,
                "delta": event.delta,
                "score": score,
            },
            status=status.HTTP_201_CREATED,
        )
