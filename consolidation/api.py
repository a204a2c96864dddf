"""REST: "consolidate now" for a subject. It queues the run and answers 202 with its id; `flush`
waits for it, and the run's row (status, stats) says how it ended."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from consolidation.services import consolidation_request
from memory.api.base import AppAPIView
from memory.api.schema import error_response


class ConsolidateApi(AppAPIView):
    @extend_schema(
        request=None,
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
        run = consolidation_request(subject=self.subject(subject), actor=self.actor)
        return Response({"job_run": run.pk, "status": run.status}, status=status.HTTP_202_ACCEPTED)
