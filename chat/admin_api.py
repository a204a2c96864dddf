"""Admin routes that need the chat app (docs/admin-api.md): rebuilding a conversation's or a
subject's memories by re-running reflection, and a conversation's export, with its reflection
runs. Mounted under /api/v1/admin/ by memoryweb/urls.py, with an admin key."""

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from chat.models import ReflectionRun
from chat.reflect import conversation_rebuild, subject_rebuild
from memory.api.admin import ADMIN_ERRORS, AdminAPIView, RetrievalEventOut, retrieval_event_data
from memory.api.base import StrictSerializer
from memory.api.fields import StrictIntegerField, SubjectField
from memory.api.schema import error_response
from memory.models import Evidence, RetrievalEvent


class RebuildOut(serializers.Serializer):
    conversations = serializers.IntegerField(help_text="conversations re-read")
    messages = serializers.IntegerField(help_text="messages re-read")
    facts = serializers.IntegerField(help_text="profile-fact rows written (0 on a repeat)")
    notes = serializers.IntegerField(help_text="note rows written (0 on a repeat)")
    evidence = serializers.IntegerField(help_text="evidence units written (0 on a repeat)")


class RebuildApi(AdminAPIView):
    class InputSerializer(StrictSerializer):
        conversation = StrictIntegerField(required=False, min_value=1)
        subject = SubjectField(required=False, help_text="every conversation of this subject of `app`")
        app = StrictIntegerField(required=False, min_value=1, help_text="the App of `subject`")
        min_fields = 1
        schema_rules = {
            "oneOf": [
                {
                    "required": ["conversation"],
                    "not": {"anyOf": [{"required": ["subject"]}, {"required": ["app"]}]},
                },
                {"required": ["subject", "app"], "not": {"required": ["conversation"]}},
            ]
        }

        def validate(self, attrs):
            if ("conversation" in attrs) == ("subject" in attrs):
                raise serializers.ValidationError({"conversation": ["give one of conversation or subject"]})
            if "subject" in attrs and "app" not in attrs:
                raise serializers.ValidationError({"app": ["a subject is named with its app"]})
            if "conversation" in attrs and "app" in attrs:
                raise serializers.ValidationError({"app": ["a conversation is named by its id alone"]})
            return attrs

    @extend_schema(
        request=InputSerializer,
        responses={200: RebuildOut, 400: error_response(400), 404: error_response(404), **ADMIN_ERRORS},
        summary="Re-run reflection over every message of a conversation (or of each of a subject's), now; a repeat writes nothing",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        if "conversation" in data:
            result = conversation_rebuild(conversation=self.conversation(data["conversation"]))
            result = {
                "conversations": 1,
                **{k: result[k] for k in ("messages", "facts", "notes", "evidence")},
            }
        else:
            subject = self.subject_in(self.app_or_none(data["app"]), data["subject"])
            result = subject_rebuild(subject=subject)
        return Response(result)


class ExportMessageOut(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True)
    occurred_at = serializers.DateTimeField()
    external_id = serializers.CharField(allow_blank=True)


class ExportEvidenceOut(serializers.Serializer):
    id = serializers.IntegerField()
    message = serializers.IntegerField()
    role = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True)
    category = serializers.CharField(allow_blank=True)
    status = serializers.CharField()
    occurred_at = serializers.DateTimeField()


class ExportRunOut(serializers.Serializer):
    id = serializers.IntegerField()
    through_message = serializers.IntegerField()
    status = serializers.CharField()
    stats = serializers.DictField()
    error = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class ConversationExportOut(serializers.Serializer):
    id = serializers.IntegerField()
    app = serializers.CharField()
    subject = serializers.CharField()
    external_id = serializers.CharField(allow_blank=True)
    mode = serializers.CharField(allow_blank=True)
    messages = ExportMessageOut(many=True)
    evidence = ExportEvidenceOut(many=True)
    reflection_runs = ExportRunOut(many=True)
    retrieval_events = RetrievalEventOut(many=True)


class ConversationExportApi(AdminAPIView):
    @extend_schema(
        responses={200: ConversationExportOut, 404: error_response(404), **ADMIN_ERRORS},
        summary="A conversation as JSON: messages, evidence, reflection runs and retrieval events",
    )
    def get(self, request, conversation_id):
        conversation = self.conversation(conversation_id)
        messages = conversation.messages.order_by("occurred_at", "pk")
        evidence = Evidence.objects.filter(conversation=conversation).order_by("occurred_at", "pk")
        runs = ReflectionRun.objects.filter(conversation=conversation).order_by("pk")
        events = RetrievalEvent.objects.filter(conversation=conversation).select_related("subject__app")
        return Response(
            {
                "id": conversation.pk,
                "app": conversation.subject.app.name,
                "subject": conversation.subject.external_id,
                "external_id": conversation.external_id,
                "mode": conversation.mode,
                "messages": [
                    {
                        "id": m.pk,
                        "role": m.role,
                        "name": m.name,
                        "text": m.text,
                        "occurred_at": m.occurred_at,
                        "external_id": m.external_id,
                    }
                    for m in messages
                ],
                "evidence": [
                    {
                        "id": e.pk,
                        "message": e.message_id,
                        "role": e.role,
                        "name": e.name,
                        "text": e.text,
                        "category": e.category,
                        "status": e.status,
                        "occurred_at": e.occurred_at,
                    }
                    for e in evidence
                ],
                "reflection_runs": [
                    {
                        "id": r.pk,
                        "through_message": r.through_message_id,
                        "status": r.status,
                        "stats": r.stats,
                        "error": r.error,
                        "created_at": r.created_at,
                        "finished_at": r.finished_at,
                    }
                    for r in runs
                ],
                "retrieval_events": [retrieval_event_data(e) for e in events.order_by("pk")],
            }
        )


urlpatterns = [
    path("rebuild", RebuildApi.as_view(), name="api-admin-rebuild"),
    path(
        "conversations/<int:conversation_id>/export",
        ConversationExportApi.as_view(),
        name="api-admin-conversation-export",
    ),
]
