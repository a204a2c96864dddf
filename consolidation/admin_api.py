"""Admin routes that need the consolidation app (docs/admin-api.md): the lifecycle run now.
Mounted under /api/v1/admin/ by memoryweb/urls.py, with an admin key."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from consolidation.services import LIFECYCLE_STEPS, lifecycle_run
from memory.api.admin import ADMIN_ERRORS, AdminAPIView
from memory.api.base import StrictSerializer
from memory.api.fields import StrictChoiceField, StrictIntegerField, StrictListField
from memory.api.schema import error_response


class LifecycleOut(serializers.Serializer):
    decay = inline_serializer(
        "LifecycleDecay",
        {
            "skipped": serializers.BooleanField(help_text="another decay held the lease"),
            "job_run": serializers.IntegerField(allow_null=True),
            "stats": serializers.DictField(help_text="scope, factors and the rows decayed per table"),
        },
        required=False,
        help_text="present when the step ran",
    )
    expire = inline_serializer(
        "LifecycleExpire",
        {"expired": serializers.IntegerField(help_text="pending consent items expired")},
        required=False,
    )
    evict = inline_serializer(
        "LifecycleEvict",
        {
            "notes": serializers.IntegerField(help_text="notes evicted over notes.maxEntries"),
            "evidence": serializers.IntegerField(help_text="units evicted over evidence.maxEntries"),
        },
        required=False,
    )


class LifecycleApi(AdminAPIView):
    class InputSerializer(StrictSerializer):
        app = StrictIntegerField(required=False, min_value=1, help_text="one App; all of them without")
        steps = StrictListField(
            child=StrictChoiceField(choices=list(LIFECYCLE_STEPS)),
            required=False,
            min_length=1,
            help_text="default: all, run in the order decay, expire, evict",
        )

    @extend_schema(
        request=InputSerializer,
        responses={200: LifecycleOut, 400: error_response(400), 404: error_response(404), **ADMIN_ERRORS},
        summary="Run the lifecycle now: vote decay (forced), pending-consent expiry, notes and evidence eviction",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        app = self.app_or_none(data.get("app"))
        return Response(lifecycle_run(actor=self.actor, app=app, steps=data.get("steps")))


urlpatterns = [
    path("lifecycle", LifecycleApi.as_view(), name="api-admin-lifecycle"),
]
