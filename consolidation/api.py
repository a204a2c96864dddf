"""REST: "consolidate now" for a subject. It queues the run and answers 202 with its id; `flush`
waits for it, and the run's row (status, stats) says how it ended."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from consolidation.services import consolidation_request
from memory.api.base import AppAPIView, StrictSerializer
from memory.api.fields import ProfileField
from memory.api.schema import error_response
from memory.profiles import profile_check


class ConsolidateApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        profile = ProfileField()

    @extend_schema(
        request=InputSerializer,
        responses={
            202: inline_serializer(
                "ConsolidationQueued",
                {"job_run": serializers.IntegerField(), "status": serializers.CharField()},
            ),
            409: error_response(409),
        },
        summary="Queue a consolidation of the subject (answers at once)",
    )
    def post(self, request, subject):
        data = self.validated(self.InputSerializer, request.data)
        profile = profile_check(data["profile"], self.config)
        run = consolidation_request(subject=self.subject(subject), actor=self.actor, profile=profile)
        return Response({"job_run": run.pk, "status": run.status}, status=status.HTTP_202_ACCEPTED)
