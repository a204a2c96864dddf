"""REST twins of `manage.py memory …` for one subject, under /api/v1/subjects/<id>/memory/: what
a chat app needs to offer `/memory` slash commands (view, stats, diagnose, clear, reset, enqueue,
rebuild, reload) and the mental models (list, create, seed, refresh, show, delete, history).

The session-summary operations that run the pipeline (enqueue, rebuild) answer 409 while the
App's `memory.backend` is off; the mental models work either way."""

from django.core.validators import RegexValidator
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from chat.summaries.mental_models import (
    mental_model_create,
    mental_model_get,
    mental_model_refresh,
    mental_models_list,
    mental_models_refresh,
    mental_models_seed,
)
from chat.summaries.pipeline import summaries_request
from chat.summaries.status import summaries_diagnose, summaries_stats
from memory.api.base import AppAPIView, StrictSerializer
from memory.api.fields import ProfileField, StrictBooleanField, StrictCharField, StrictIntegerField
from memory.api.schema import ErrorOut, error_response
from memory.api.views import ContextOut
from memory.context import context_build
from memory.documents import document_versions, version_diff
from memory.profiles import profile_check
from memory.services.documents import conversation_memory_reload, document_delete, summaries_clear

# memory/documents.py NAME, less the two names the URLs below take for themselves
MODEL_NAME = r"^(?!(?:seed|refresh)$)[a-z0-9][a-z0-9-]{0,63}$"


# the one value inside allOf: drf-spectacular would otherwise name this [true] enum a second
# time (the profile's pinned rule has one) and warn
@extend_schema_field({"type": "boolean", "allOf": [{"enum": [True]}], "description": "must be true"})
class ConfirmField(StrictBooleanField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value is not True:
            raise serializers.ValidationError("must be true: this deletes the subject's summaries")
        return value


class ConfirmIn(StrictSerializer):
    confirm = ConfirmField()


class RunOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    stats = serializers.DictField()
    error = serializers.CharField(allow_blank=True)


class MemoryStatsOut(serializers.Serializer):
    extractions = serializers.IntegerField()
    extraction_methods = serializers.DictField(child=serializers.IntegerField(), help_text="per method")
    documents = inline_serializer(
        "MemoryDocumentCounts",
        {kind: serializers.IntegerField() for kind in ("memory", "summary", "skill", "mental_model")},
    )
    pruned_skills = serializers.IntegerField()
    versions = serializers.IntegerField()
    tokens = inline_serializer(
        "MemoryTokensSpent", {"input": serializers.IntegerField(), "output": serializers.IntegerField()}
    )
    last_run = RunOut(allow_null=True)


class MemoryDiagnoseOut(serializers.Serializer):
    backend = serializers.CharField()
    enabled = serializers.BooleanField()
    model = inline_serializer(
        "SummariesModel",
        {
            "spec": serializers.CharField(allow_blank=True),
            "provider": serializers.CharField(allow_blank=True),
            "model": serializers.CharField(allow_blank=True),
            "api_key": serializers.CharField(allow_blank=True, help_text="whether it is set, never the key"),
            "problem": serializers.CharField(allow_blank=True),
            "path": serializers.ChoiceField(choices=["llm", "heuristic"]),
        },
    )
    conversations = inline_serializer(
        "SummariesConversations",
        {k: serializers.IntegerField() for k in ("due", "active", "old", "deferred", "current")},
    )
    lease = inline_serializer(
        "SummariesLease",
        {
            "held": serializers.BooleanField(),
            "owner": serializers.CharField(allow_blank=True),
            "expires_at": serializers.DateTimeField(allow_null=True),
            "expired": serializers.BooleanField(),
            "queued": serializers.IntegerField(),
        },
    )
    last_run = RunOut(allow_null=True)
    last_error = serializers.CharField(allow_blank=True)


class MemoryClearedOut(serializers.Serializer):
    extractions = serializers.IntegerField()
    documents = serializers.IntegerField()


QUEUED = inline_serializer(
    "SummariesQueued", {"job_run": serializers.IntegerField(), "status": serializers.CharField()}
)


class ReloadedOut(serializers.Serializer):
    conversations = inline_serializer(
        "ConversationReloaded",
        {
            "id": serializers.IntegerField(),
            "summary_version": serializers.IntegerField(allow_null=True, help_text="the summary now pinned"),
        },
        many=True,
    )


class MentalModelOut(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    auto_refresh = serializers.BooleanField()
    builtin = serializers.BooleanField()
    version = serializers.IntegerField(source="current.number")
    method = serializers.CharField(source="current.method", allow_blank=True)
    updated_at = serializers.DateTimeField()


class MentalModelDetailOut(MentalModelOut):
    content = serializers.CharField(source="current.content", allow_blank=True)


class MentalModelListOut(serializers.Serializer):
    mental_models = MentalModelOut(many=True)


class MentalModelsRefreshedOut(serializers.Serializer):
    models = serializers.IntegerField(help_text="how many were refreshed")
    versions = serializers.IntegerField(help_text="how many of them changed")
    changed = serializers.ListField(child=serializers.CharField())


class MentalModelRefreshedOut(serializers.Serializer):
    name = serializers.CharField()
    changed = serializers.BooleanField()
    version = serializers.IntegerField(help_text="the current version")


class MentalModelVersionOut(serializers.Serializer):
    number = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    method = serializers.CharField(allow_blank=True)
    content = serializers.CharField(allow_blank=True)
    diff = serializers.CharField(allow_blank=True, help_text="unified diff from the version before")


class MentalModelHistoryOut(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.CharField()
    versions = MentalModelVersionOut(many=True)


# --- the session summaries ------------------------------------------------------------------


class MemoryViewApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        message = StrictCharField(
            required=False, allow_blank=True, max_length=20_000, trim_whitespace=True, default=""
        )
        conversation = StrictIntegerField(required=False, min_value=1)

    @extend_schema(
        request=InputSerializer,
        responses={200: ContextOut},
        summary="What the model gets for a message: both halves, nothing recorded",
    )
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        subject = self.subject(subject)
        conversation = (
            self.conversation(data["conversation"], subject=subject) if "conversation" in data else None
        )
        context = context_build(
            subject=subject,
            message=data["message"],
            config=self.config,
            conversation=conversation,
            record=False,
        )
        return Response(context.as_dict())


class MemoryStatsApi(AppAPIView):
    @extend_schema(responses={200: MemoryStatsOut}, summary="The subject's session-summary counts")
    def get(self, request, subject):
        return Response(MemoryStatsOut(summaries_stats(subject=self.subject(subject))).data)


class MemoryDiagnoseApi(AppAPIView):
    @extend_schema(responses={200: MemoryDiagnoseOut}, summary="Whether the subject's summaries can run")
    def get(self, request, subject):
        return Response(MemoryDiagnoseOut(summaries_diagnose(subject=self.subject(subject))).data)


class MemoryClearApi(AppAPIView):
    mental_models = False

    @extend_schema(
        request=ConfirmIn,
        responses={200: MemoryClearedOut},
        summary="Delete the subject's extractions and documents, mental models kept",
    )
    def post(self, request, subject):
        self.validated(ConfirmIn, request.data)
        cleared = summaries_clear(
            subject=self.subject(subject), actor=self.actor, mental_models=self.mental_models
        )
        return Response(MemoryClearedOut(cleared).data)


class MemoryResetApi(MemoryClearApi):
    mental_models = True

    @extend_schema(
        request=ConfirmIn,
        responses={200: MemoryClearedOut},
        summary="Delete the subject's extractions and every document, mental models too",
    )
    def post(self, request, subject):
        return super().post(request, subject)


class MemoryEnqueueApi(AppAPIView):
    force = False

    class InputSerializer(StrictSerializer):
        profile = ProfileField()

    @extend_schema(
        request=InputSerializer,
        responses={202: QUEUED, 409: error_response(409)},
        summary="Queue a session-summary run of the subject (answers at once)",
    )
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        profile = profile_check(data["profile"], self.config)
        run = summaries_request(
            subject=self.subject(subject), actor=self.actor, force=self.force, profile=profile
        )
        return Response({"job_run": run.pk, "status": run.status}, status=status.HTTP_202_ACCEPTED)


class MemoryRebuildApi(MemoryEnqueueApi):
    force = True

    @extend_schema(
        request=MemoryEnqueueApi.InputSerializer,
        responses={202: QUEUED, 409: error_response(409)},
        summary="Queue a rebuild: every conversation re-extracted, every document recomposed",
    )
    def post(self, request, subject):
        return super().post(request, subject)


class MemoryReloadApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        conversation = StrictIntegerField(required=False, min_value=1)

    @extend_schema(
        request=InputSerializer,
        responses={200: ReloadedOut},
        summary="Send the current summary and the mental models again (one conversation, or all)",
    )
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        subject = self.subject(subject)
        if "conversation" in data:
            conversations = [self.conversation(data["conversation"], subject=subject)]
        else:
            conversations = list(subject.conversations.order_by("pk"))
        rows = []
        for conversation in conversations:
            version = conversation_memory_reload(conversation=conversation, actor=self.actor)
            rows.append({"id": conversation.pk, "summary_version": version.number if version else None})
        return Response({"conversations": rows})


# --- mental models --------------------------------------------------------------------------

CONFLICT = OpenApiResponse(response=ErrorOut, description="A mental model of this name exists already")


class MentalModelsApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        name = StrictCharField(
            max_length=64,
            validators=[RegexValidator(MODEL_NAME, message="1–64 lowercase letters, digits and '-'")],
        )
        description = StrictCharField(max_length=2000)
        auto_refresh = StrictBooleanField(required=False, default=True)

    @extend_schema(
        responses={200: MentalModelListOut},
        summary="The subject's mental models",
        operation_id="mental_models_list",
    )
    def get(self, request, subject):
        documents = mental_models_list(subject=self.subject(subject))
        return Response({"mental_models": MentalModelOut(documents, many=True).data})

    @extend_schema(
        request=InputSerializer,
        responses={201: MentalModelDetailOut, 409: CONFLICT},
        summary="Create a mental model (written at once from what is known)",
    )
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        document = mental_model_create(subject=self.subject(subject), actor=self.actor, **data)
        return Response(MentalModelDetailOut(document).data, status=status.HTTP_201_CREATED)


class MentalModelsSeedApi(AppAPIView):
    @extend_schema(
        request=None,
        responses={200: MentalModelListOut},
        summary="Create the built-in mental models the subject lacks (lists those created)",
    )
    def post(self, request, subject):
        created = mental_models_seed(subject=self.subject(subject), actor=self.actor)
        return Response({"mental_models": MentalModelOut(created, many=True).data})


class MentalModelsRefreshApi(AppAPIView):
    @extend_schema(
        request=None,
        responses={200: MentalModelsRefreshedOut},
        summary="Refresh every auto-refresh mental model",
        operation_id="mental_models_refresh",
    )
    def post(self, request, subject):
        return Response(mental_models_refresh(subject=self.subject(subject), actor=self.actor))


class MentalModelApi(AppAPIView):
    @extend_schema(
        responses={200: MentalModelDetailOut},
        summary="A mental model and its content",
        operation_id="mental_model_read",
    )
    def get(self, request, subject, name):
        document = mental_model_get(subject=self.subject(subject), name=name)
        return Response(MentalModelDetailOut(document).data)

    @extend_schema(responses={204: None}, summary="Delete a mental model and its history")
    def delete(self, request, subject, name):
        document_delete(document=mental_model_get(subject=self.subject(subject), name=name), actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MentalModelRefreshApi(AppAPIView):
    @extend_schema(
        request=None,
        responses={200: MentalModelRefreshedOut},
        summary="Refresh one mental model",
        operation_id="mental_model_refresh",
    )
    def post(self, request, subject, name):
        document = mental_model_get(subject=self.subject(subject), name=name)
        version = mental_model_refresh(document=document, actor=self.actor)
        document.refresh_from_db()
        return Response(
            {"name": document.name, "changed": version is not None, "version": document.current.number}
        )


class MentalModelHistoryApi(AppAPIView):
    @extend_schema(
        responses={200: MentalModelHistoryOut}, summary="A mental model's versions, each with its diff"
    )
    def get(self, request, subject, name):
        document = mental_model_get(subject=self.subject(subject), name=name)
        versions, previous = [], None
        for version in document_versions(document=document):
            versions.append(
                {
                    "number": version.number,
                    "created_at": version.created_at,
                    "method": version.method,
                    "content": version.content,
                    "diff": version_diff(previous, version, url=document.url),
                }
            )
            previous = version
        return Response(
            MentalModelHistoryOut({"name": document.name, "url": document.url, "versions": versions}).data
        )
