"""Evidence (the turns as memories, memory.models.Evidence): read or forget one by id."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView
from memory.models import EvidenceStatus, Role
from memory.selectors import evidence_dict, evidence_get
from memory.services.evidence import evidence_forget


class EvidenceOut(serializers.Serializer):
    id = serializers.IntegerField()
    subject = serializers.CharField(help_text="The subject's external id.")
    conversation = serializers.IntegerField()
    message = serializers.IntegerField()
    role = serializers.ChoiceField(choices=[Role.USER, Role.ASSISTANT])
    name = serializers.CharField(
        help_text='Its message\'s speaker name ("" none; empty once denied or forgotten).'
    )
    text = serializers.CharField(help_text="The message's redacted text; empty once denied or forgotten.")
    occurred_at = serializers.DateTimeField()
    category = serializers.CharField(help_text='The consent category of the turn ("" none).')
    status = serializers.ChoiceField(choices=EvidenceStatus.choices)
    retrievable = serializers.BooleanField(help_text="Whether a context may show it.")
    recall_count = serializers.IntegerField()
    last_recalled_at = serializers.DateTimeField(allow_null=True)
    archived_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class EvidenceApi(AppAPIView):
    def _unit(self, evidence_id: int):
        unit = evidence_get(app=self.app, evidence_id=evidence_id)
        self.subject_check(unit.subject)
        return unit

    @extend_schema(responses={200: EvidenceOut}, summary="Read an evidence unit (a turn) by id")
    def get(self, request, evidence_id):
        return Response(evidence_dict(self._unit(evidence_id)))

    @extend_schema(responses={204: None}, summary="Forget an evidence unit (it is not written again)")
    def delete(self, request, evidence_id):
        evidence_forget(evidence=self._unit(evidence_id), actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)
