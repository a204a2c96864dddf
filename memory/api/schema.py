"""How the OpenAPI schema (drf-spectacular) is told the truth about what the API refuses.

- Every operation lists the error answers it can give, each in the one error envelope
  (`Error`): 400, 401, 403, 404 and 429 (over the key's rate limit) for all; 413 and 415 for those that take a body. A view
  adds its own (409 `disabled`) in its `extend_schema(responses=...)`.
- A request body read by a `StrictSerializer` refuses unknown fields, so its schema says
  `additionalProperties: false`.
- The consent categories are rows (the admin may add one), so their enum is read from the
  database each time the schema is built.
- The assistant modes are manifests (a deployment adds its own), so their enum is read from the
  mode registry each time the schema is built.
"""

import copy

from django.db import connection
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

from memory.api.base import StrictQuerySerializer, StrictSerializer
from memory.api.fields import ConsentCategoryField, ModeNameField, StrictCharField, text_pattern


class ErrorOut(serializers.Serializer):
    # inline: a field named "fields" cannot be declared on a Serializer class (it has .fields)
    error = inline_serializer(
        "ErrorDetail",
        {
            "code": serializers.CharField(
                help_text="invalid, parse_error, not_authenticated, not_found, too_large, …"
            ),
            "message": serializers.CharField(),
            "field": serializers.CharField(
                required=False, help_text='the first field at fault ("body" for the body as a whole)'
            ),
            "fields": serializers.DictField(
                child=serializers.CharField(),
                required=False,
                help_text="every field at fault and its message",
            ),
        },
    )


ERRORS = {
    400: "Bad input: a field missing, of the wrong type, out of range or unknown (`field` names it)",
    401: "No API key, or one that is unknown or revoked",
    403: "The key's app is paused (`permission_denied`), or the person paused this app's access to "
    "the subject (`app_paused_for_subject`)",
    404: "An unknown subject, conversation or item, or one of another app",
    409: "The app's configuration switches this off (`field` names the key)",
    413: "The request body is over the upload limit",
    415: "The body is not application/json",
    429: "The key is over its rate limit (`Retry-After` says the seconds to wait)",
}


def error_response(status: int) -> OpenApiResponse:
    return OpenApiResponse(response=ErrorOut, description=ERRORS[status])


class ApiSchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if not self.path.startswith("/api/v1/"):
            return responses
        if not self.view.get_authenticators():
            return responses  # a keyless view (liveness) lists its own answers
        statuses = [400, 401, 403, 404]
        if self.view.get_throttles():
            statuses.append(429)
        if self.method in ("POST", "PUT", "PATCH") and self.get_request_serializer() is not None:
            statuses += [413, 415]
        for status in statuses:
            if str(status) not in responses:
                responses[str(status)] = self._get_response_for_code(
                    error_response(status), str(status), direction=direction
                )
        return dict(sorted(responses.items()))

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        strict_body = isinstance(serializer, StrictSerializer) and not isinstance(
            serializer, StrictQuerySerializer
        )
        if direction == "request" and strict_body:
            schema["additionalProperties"] = False
            if serializer.min_fields:
                schema["minProperties"] = serializer.min_fields
            schema.update(copy.deepcopy(serializer.schema_rules))  # the enum hook edits it in place
        return schema

    def _insert_field_validators(self, field, schema):
        super()._insert_field_validators(field, schema)  # a RegexValidator's pattern comes first
        if isinstance(field, StrictCharField) and schema.get("type") == "string":
            schema.setdefault("pattern", text_pattern(blank=field.allow_blank, exclude=field.excluded))

    def _get_request_body(self, direction="request"):
        body = super()._get_request_body(direction)
        if body and getattr(self.get_request_serializer(), "min_fields", 0):
            body["required"] = True
        return body


def path_rules(result, generator, request, public):
    """Postprocessing hook: `{subject}` in a path is an external id (1–200 characters, not blank;
    a '/' cannot be in a path segment anyway)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] == "subject":
                    parameter["schema"] = {
                        "type": "string",
                        "maxLength": 200,
                        "pattern": text_pattern(blank=False),
                    }
    return result


class ConsentCategoryFieldSchema(OpenApiSerializerFieldExtension):
    target_class = ConsentCategoryField

    def map_serializer_field(self, auto_schema, direction):
        # here, not at the top: DRF loads the schema class while the app registry is still filling
        from memory.models import ConsentCategory

        described = {"type": "string", "description": "a slug of GET /api/v1/consent/categories"}
        if ConsentCategory._meta.db_table not in connection.introspection.table_names():
            # before `migrate` (`check --deploy` builds the schema on a fresh database): no rows
            # to list yet, and the schema must still build
            return described
        slugs = list(ConsentCategory.objects.order_by("slug").values_list("slug", flat=True))
        return {**described, "enum": slugs}


class ModeNameFieldSchema(OpenApiSerializerFieldExtension):
    target_class = ModeNameField

    def map_serializer_field(self, auto_schema, direction):
        from memory.modes import mode_names

        return {
            "type": "string",
            "description": 'an assistant mode of GET /api/v1/modes; "" = none',
            "enum": ["", *sorted(mode_names())],
        }
