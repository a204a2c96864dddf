"""Operators' REST routes under /api/v1/admin/ (docs/admin-api.md), reached with an admin key
(memory.models.AdminKey, `Bearer mwa_…`) and never with an app's key. This module holds what
the memory layer can answer by itself: inspecting a retrieval event, replaying one (or a
conversation) under an ablation preset, reindexing full text and vectors, and the metrics.
Rebuild and export live in
chat/admin_api.py, the lifecycle in consolidation/admin_api.py; memoryweb/urls.py mounts them."""

from functools import cached_property

from django.db import connection
from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.api.auth import AdminKeyAuthentication, IsAdminKey
from memory.api.base import StrictQuerySerializer, StrictSerializer
from memory.api.fields import StrictBooleanField, StrictChoiceField, StrictIntegerField, SubjectField
from memory.api.schema import error_response
from memory.api.views import ContextItemOut
from memory.models import AdminKey, App, Conversation, RetrievalEvent, Subject
from memory.replay import ABLATIONS, replay_conversation, replay_event
from memory.search.schema import reindex
from memory.selectors import metric_history, metric_latest
from memory.services.audit import Actor
from memory.services.embeddings import reembed
from memory.services.metrics import metrics_compute
from memoryweb.errors import InvalidInput, NotFound

ADMIN_ERRORS = {401: error_response(401), 403: error_response(403)}


class AdminAPIView(APIView):
    """Base view of the admin routes: an admin key, no App (an operator sees every App)."""

    authentication_classes = [AdminKeyAuthentication]
    permission_classes = [IsAdminKey]
    throttle_classes: list = []

    @cached_property
    def admin_key(self) -> AdminKey:
        key = self.request.auth
        assert isinstance(key, AdminKey)  # IsAdminKey refused the request otherwise
        return key

    @cached_property
    def actor(self) -> Actor:
        return Actor.system(f"admin_key:{self.admin_key.prefix}")

    @staticmethod
    def validated(serializer_class, data, **kwargs) -> dict:
        serializer = serializer_class(data=data, **kwargs)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    @staticmethod
    def conversation(conversation_id: int) -> Conversation:
        conversation = Conversation.objects.select_related("subject__app").filter(pk=conversation_id).first()
        if conversation is None:
            raise NotFound(f"no conversation {conversation_id}", field="conversation")
        return conversation

    @staticmethod
    def app_or_none(app_id: int | None) -> App | None:
        if app_id is None:
            return None
        app = App.objects.filter(pk=app_id).first()
        if app is None:
            raise NotFound(f"no app {app_id}", field="app")
        return app

    @staticmethod
    def subject_in(app: App | None, external_id: str) -> Subject:
        """The subject `external_id` of `app`; an admin route naming a subject names its App."""
        if app is None:
            raise InvalidInput("a subject is named with its app", field="app")
        subject = Subject.objects.select_related("app").filter(app=app, external_id=external_id).first()
        if subject is None:
            raise NotFound(f"no subject {external_id!r} in app {app.pk}", field="subject")
        return subject


# --- retrieval events ---------------------------------------------------------------------


class RetrievalEventOut(serializers.Serializer):
    id = serializers.IntegerField()
    app = serializers.CharField()
    subject = serializers.CharField()
    conversation = serializers.IntegerField(allow_null=True)
    query = serializers.CharField(allow_blank=True)
    rewritten_query = serializers.CharField(allow_blank=True)
    items = serializers.ListField(child=serializers.DictField(), help_text="as the context's items")
    tokens = serializers.DictField(child=serializers.IntegerField())
    latency_ms = serializers.FloatField()
    mode = serializers.CharField(allow_blank=True)
    profile = serializers.CharField()
    policy_hash = serializers.CharField(allow_blank=True)
    from_cache = serializers.BooleanField()
    staleness = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()


def retrieval_event_data(event: RetrievalEvent) -> dict:
    return {
        "id": event.pk,
        "app": event.subject.app.name,
        "subject": event.subject.external_id,
        "conversation": event.conversation_id,
        "query": event.query,
        "rewritten_query": event.rewritten_query,
        "items": event.items,
        "tokens": event.tokens,
        "latency_ms": event.latency_ms,
        "mode": event.mode,
        "profile": event.profile,
        "policy_hash": event.policy_hash,
        "from_cache": event.from_cache,
        "staleness": event.staleness,
        "created_at": event.created_at,
    }


def retrieval_event_get(event_id: int) -> RetrievalEvent:
    event = RetrievalEvent.objects.select_related("subject__app").filter(pk=event_id).first()
    if event is None:
        raise NotFound(f"no retrieval event {event_id}", field="event")
    return event


class RetrievalEventApi(AdminAPIView):
    @extend_schema(
        responses={200: RetrievalEventOut, 404: error_response(404), **ADMIN_ERRORS},
        summary="One retrieval event: the query, the items chosen with their scores and reasons, tokens, mode, policy",
    )
    def get(self, request, event_id):
        return Response(retrieval_event_data(retrieval_event_get(event_id)))


# --- replay -------------------------------------------------------------------------------


class SectionDiffOut(serializers.Serializer):
    section = serializers.CharField()
    added = serializers.ListField(child=serializers.CharField(), help_text="item ids only the ablation chose")
    removed = serializers.ListField(
        child=serializers.CharField(), help_text="item ids only the normal build chose"
    )
    reordered = serializers.BooleanField(help_text="the items both chose, in another order")


class WithheldItemOut(serializers.Serializer):
    id = serializers.CharField()
    kind = serializers.CharField()
    section = serializers.CharField()
    category = serializers.CharField(help_text="the consent category the person denies")


class ReplayTurnOut(serializers.Serializer):
    message = serializers.CharField(allow_blank=True)
    baseline = inline_serializer(
        "ReplayBuild",
        {
            "rewritten_query": serializers.CharField(allow_blank=True),
            "items": ContextItemOut(many=True),
            "tokens": serializers.DictField(child=serializers.IntegerField()),
        },
    )
    ablated = inline_serializer(
        "ReplayAblatedBuild",
        {
            "rewritten_query": serializers.CharField(allow_blank=True),
            "items": ContextItemOut(many=True),
            "tokens": serializers.DictField(child=serializers.IntegerField()),
        },
    )
    diff = inline_serializer(
        "ReplayDiff",
        {
            "rewritten_query_changed": serializers.BooleanField(),
            "sections": SectionDiffOut(many=True),
            "tokens": serializers.DictField(
                child=serializers.IntegerField(), help_text="ablated minus baseline, per block and total"
            ),
            "changed": serializers.BooleanField(),
            "withheld": WithheldItemOut(
                many=True,
                help_text="no_consent_gate: the items the consent gate would have withheld (masked in `ablated`)",
            ),
        },
    )


class ReplayOut(serializers.Serializer):
    ablation = serializers.ChoiceField(choices=sorted(ABLATIONS))
    overrides = serializers.DictField(help_text="the configuration overlay the preset applied")
    event = serializers.IntegerField(allow_null=True)
    conversation = serializers.IntegerField(allow_null=True)
    turns = ReplayTurnOut(many=True)


class ReplayApi(AdminAPIView):
    class InputSerializer(StrictSerializer):
        event = StrictIntegerField(required=False, min_value=1)
        conversation = StrictIntegerField(required=False, min_value=1)
        ablation = StrictChoiceField(choices=sorted(ABLATIONS))
        schema_rules = {"oneOf": [{"required": ["event"]}, {"required": ["conversation"]}]}

        def validate(self, attrs):
            if ("event" in attrs) == ("conversation" in attrs):
                raise serializers.ValidationError({"event": ["give one of event or conversation"]})
            return attrs

    @extend_schema(
        request=InputSerializer,
        responses={200: ReplayOut, 400: error_response(400), 404: error_response(404), **ADMIN_ERRORS},
        summary="Rebuild a retrieval (or each user turn of a conversation) normally and under an ablation; nothing is written",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        if "event" in data:
            turns = [replay_event(event=retrieval_event_get(data["event"]), ablation=data["ablation"])]
        else:
            turns = replay_conversation(
                conversation=self.conversation(data["conversation"]), ablation=data["ablation"]
            )
        return Response(
            {
                "ablation": data["ablation"],
                "overrides": ABLATIONS[data["ablation"]],
                "event": data.get("event"),
                "conversation": data.get("conversation"),
                "turns": turns,
            }
        )


# --- reindex ------------------------------------------------------------------------------


class ReindexOut(serializers.Serializer):
    fulltext = serializers.ListField(
        child=serializers.CharField(),
        help_text="the full-text indexes (SQLite) or tables (PostgreSQL) rebuilt; empty when not asked",
    )
    vectors = inline_serializer(
        "ReindexVectors",
        {
            "subjects": serializers.IntegerField(help_text="subjects of apps with embeddings on"),
            "notes": serializers.IntegerField(),
            "embedded": serializers.IntegerField(help_text="note vectors written"),
            "unchanged": serializers.IntegerField(),
            "evidence_embedded": serializers.IntegerField(help_text="evidence vectors written"),
            "orphans_removed": serializers.IntegerField(),
            "models": serializers.ListField(child=serializers.CharField()),
            "errors": serializers.ListField(child=serializers.DictField()),
        },
        allow_null=True,
        help_text="null when not asked",
    )


class ReindexApi(AdminAPIView):
    class InputSerializer(StrictSerializer):
        app = StrictIntegerField(required=False, min_value=1, help_text="re-embed this App's subjects only")
        subject = SubjectField(required=False, help_text="re-embed this subject of `app` only")
        fulltext = StrictBooleanField(required=False, default=True, help_text="rebuild every full-text index")
        vectors = StrictBooleanField(required=False, default=True, help_text="re-embed notes and evidence")
        schema_rules = {"anyOf": [{"not": {"required": ["subject"]}}, {"required": ["app"]}]}

    @extend_schema(
        request=InputSerializer,
        responses={200: ReindexOut, 400: error_response(400), 404: error_response(404), **ADMIN_ERRORS},
        summary="Rebuild the full-text indexes and re-embed the vectors of notes and evidence, now",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        app = self.app_or_none(data.get("app"))
        subjects = None
        if "subject" in data:
            subjects = [self.subject_in(app, data["subject"])]
        elif app is not None:
            subjects = list(Subject.objects.filter(app=app))
        # the full-text indexes are whole tables: rebuilt for every App whatever `app` says
        fulltext = reindex(connection) if data["fulltext"] else []
        vectors = reembed(subjects=subjects, evidence=True) if data["vectors"] else None
        return Response({"fulltext": fulltext, "vectors": vectors})


# --- metrics ------------------------------------------------------------------------------


class MetricSnapshotOut(serializers.Serializer):
    id = serializers.IntegerField()
    app = serializers.IntegerField(allow_null=True, help_text="null: every App")
    computed_at = serializers.DateTimeField()
    data = serializers.DictField(help_text="docs/admin-api.md#metrics")  # type: ignore[assignment]  # the field, not .data


def snapshot_data(snapshot) -> dict:
    return {
        "id": snapshot.pk,
        "app": snapshot.app_id,
        "computed_at": snapshot.computed_at,
        "data": snapshot.data,
    }


class MetricsApi(AdminAPIView):
    class InputSerializer(StrictSerializer):
        app = StrictIntegerField(required=False, min_value=1, help_text="one App; all of them without")
        window_hours = StrictIntegerField(required=False, min_value=1, max_value=24 * 365, default=24)

    class QuerySerializer(StrictQuerySerializer):
        app = StrictIntegerField(required=False, min_value=1)

    @extend_schema(
        request=InputSerializer,
        responses={
            201: MetricSnapshotOut,
            400: error_response(400),
            404: error_response(404),
            **ADMIN_ERRORS,
        },
        summary="Compute the metrics now and keep them as a snapshot",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        snapshot = metrics_compute(app=self.app_or_none(data.get("app")), window_hours=data["window_hours"])
        return Response(snapshot_data(snapshot), status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[QuerySerializer],
        responses={
            200: MetricSnapshotOut,
            400: error_response(400),
            404: error_response(404),
            **ADMIN_ERRORS,
        },
        summary="The latest metrics snapshot (of one App, or of every App)",
    )
    def get(self, request):
        data = self.validated(self.QuerySerializer, request.query_params)
        app = self.app_or_none(data.get("app"))
        snapshot = metric_latest(app=app)
        if snapshot is None:
            raise NotFound("no metrics computed yet: POST /api/v1/admin/metrics", field="app")
        return Response(snapshot_data(snapshot))


class MetricsHistoryApi(AdminAPIView):
    class QuerySerializer(StrictQuerySerializer):
        app = StrictIntegerField(required=False, min_value=1)
        limit = StrictIntegerField(required=False, min_value=1, max_value=500, default=50)
        before = StrictIntegerField(required=False, min_value=1, help_text="snapshots older than this id")

    @extend_schema(
        parameters=[QuerySerializer],
        responses={
            200: inline_serializer(
                "MetricHistory",
                {
                    "snapshots": MetricSnapshotOut(many=True),
                    "next_before": serializers.IntegerField(allow_null=True),
                },
            ),
            400: error_response(400),
            404: error_response(404),
            **ADMIN_ERRORS,
        },
        summary="Earlier metrics snapshots, newest first",
    )
    def get(self, request):
        data = self.validated(self.QuerySerializer, request.query_params)
        app = self.app_or_none(data.get("app"))
        limit = data["limit"]
        rows = metric_history(app=app, limit=limit + 1, before=data.get("before"))
        more = len(rows) > limit
        rows = rows[:limit]
        return Response(
            {"snapshots": [snapshot_data(s) for s in rows], "next_before": rows[-1].pk if more else None}
        )


urlpatterns = [
    path("retrievals/<int:event_id>", RetrievalEventApi.as_view(), name="api-admin-retrieval"),
    path("replay", ReplayApi.as_view(), name="api-admin-replay"),
    path("reindex", ReindexApi.as_view(), name="api-admin-reindex"),
    path("metrics", MetricsApi.as_view(), name="api-admin-metrics"),
    path("metrics/history", MetricsHistoryApi.as_view(), name="api-admin-metrics-history"),
]
