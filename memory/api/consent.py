"""Consent endpoints (categories, per-subject policies, the pending queue) and subject export/delete."""

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictQuerySerializer, StrictSerializer
from memory.api.fields import ConsentCategoryField, StrictChoiceField, StrictIntegerField
from memory.api.portable import SubjectExportSerializer
from memory.models import ConsentCategory, PendingMemory, PendingStatus, Policy
from memory.selectors import consent_policies, subject_export
from memory.services import subject_delete
from memory.services.consent import consent_policy_set, pending_approve, pending_reject
from memoryweb.errors import NotFound


class CategoryOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    default_policy = serializers.CharField()


class PendingOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    payload = serializers.JSONField()
    category = serializers.CharField(source="category.slug")
    status = serializers.CharField()
    source_message = serializers.IntegerField(source="source_message_id", allow_null=True)
    source_text = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    result_id = serializers.IntegerField(allow_null=True)

    def get_source_text(self, obj) -> str | None:
        return obj.source_message.text if obj.source_message_id else None


class CategoryListOut(serializers.Serializer):
    categories = CategoryOut(many=True)


class PolicyOut(serializers.Serializer):
    category = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    policy = serializers.ChoiceField(choices=Policy.choices)
    is_default = serializers.BooleanField()


class PolicyListOut(serializers.Serializer):
    policies = PolicyOut(many=True)


class PendingListOut(serializers.Serializer):
    pending = PendingOut(many=True)


class ConsentCategoriesApi(AppAPIView):
    @extend_schema(responses={200: CategoryListOut}, summary="The sensitive categories")
    def get(self, request):
        return Response({"categories": CategoryOut(ConsentCategory.objects.all(), many=True).data})


class ConsentPoliciesApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        category = ConsentCategoryField()
        policy = StrictChoiceField(choices=Policy.choices)

    @extend_schema(responses={200: PolicyListOut}, summary="The subject's policy per category")
    def get(self, request, subject):
        return Response({"policies": consent_policies(subject=self.subject(subject))})

    @extend_schema(
        request=InputSerializer,
        responses={200: PolicyListOut},
        summary="Set allow / ask / deny for a category",
    )
    @transaction.atomic  # a refused category or policy leaves no new subject behind
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        subj = self.subject(subject, create=True)
        consent_policy_set(subject=subj, category=data["category"], policy=data["policy"], actor=self.actor)
        return Response({"policies": consent_policies(subject=subj)})


class PendingListApi(AppAPIView):
    class QuerySerializer(StrictQuerySerializer):
        status = StrictChoiceField(
            choices=PendingStatus.choices, required=False, default=PendingStatus.PENDING
        )
        limit = StrictIntegerField(required=False, min_value=1, max_value=500, default=100)

    @extend_schema(parameters=[QuerySerializer], responses={200: PendingListOut}, summary="The pending queue")
    def get(self, request, subject):
        params = self.validated(self.QuerySerializer, request.query_params)
        items = (
            PendingMemory.objects.filter(subject=self.subject(subject), status=params["status"])
            .select_related("category", "source_message")
            .order_by("-created_at", "-id")[: params["limit"]]
        )
        return Response({"pending": PendingOut(items, many=True).data})


class PendingDecisionApi(AppAPIView):
    decision = ""

    def pending(self, subject, pending_id) -> PendingMemory:
        item = (
            PendingMemory.objects.select_related("category", "source_message", "subject")
            .filter(pk=pending_id, subject=self.subject(subject))
            .first()
        )
        if item is None:
            raise NotFound(f"no pending item {pending_id}", field="id")
        return item

    @extend_schema(request=None, responses={200: PendingOut}, summary="Approve or reject a pending memory")
    def post(self, request, subject, pending_id):
        item = self.pending(subject, pending_id)
        if self.decision == "approve":
            pending_approve(pending=item, actor=self.actor, config=self.config)
        else:
            pending_reject(pending=item, actor=self.actor)
        item.refresh_from_db()
        return Response(PendingOut(item).data, status=status.HTTP_200_OK)


class SubjectApi(AppAPIView):
    @extend_schema(
        responses={200: SubjectExportSerializer}, summary="Export everything memoryweb holds about a subject"
    )
    def get(self, request, subject):
        return Response(subject_export(subject=self.subject(subject)))

    @extend_schema(responses={204: None}, summary="Delete a subject and all its memory")
    def delete(self, request, subject):
        subject_delete(subject=self.subject(subject), actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)
