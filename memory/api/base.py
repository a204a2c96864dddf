"""What every sidecar endpoint shares: the caller's App, its config, and tenant-scoped lookups."""

import re
from functools import cached_property

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.views import APIView

from memory.config import get_config
from memory.models import ApiKey, App
from memory.selectors import conversation_get, subject_access_check, subject_get
from memory.services import Actor, subject_get_or_create
from memoryweb.errors import InvalidInput


class AppAPIView(APIView):
    """Base view: `self.app` is the API key's App; every lookup is scoped to it."""

    @cached_property
    def api_key(self) -> ApiKey:
        key = self.request.auth
        assert isinstance(key, ApiKey)  # HasAppKey refused the request otherwise
        return key

    @cached_property
    def app(self) -> App:
        return self.api_key.app

    @cached_property
    def actor(self) -> Actor:
        return Actor.api_key(self.api_key)

    @cached_property
    def config(self):
        return get_config(self.app)

    def subject(self, external_id: str, *, create: bool = False):
        if create:
            subject = subject_get_or_create(app=self.app, external_id=external_id)
        else:
            subject = subject_get(app=self.app, external_id=external_id)
        self.subject_check(subject)
        return subject

    def conversation(self, conversation_id, *, subject=None):
        conversation = conversation_get(app=self.app, conversation_id=conversation_id, subject=subject)
        self.subject_check(conversation.subject)
        return conversation

    def subject_check(self, subject) -> None:
        """403 `app_paused_for_subject` when the person paused this App for `subject`: every
        lookup above asks it, and so must a view that reaches a subject another way."""
        subject_access_check(app=self.app, subject=subject)

    @staticmethod
    def validated(serializer_class, data, **kwargs) -> dict:
        serializer = serializer_class(data=data, **kwargs)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, naming them, instead of silently dropping them."""

    min_fields = 0  # an edit that must change something says 1 (the schema's minProperties)
    schema_rules: dict = {}  # what the fields alone cannot say (anyOf, …), for the schema

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        outer, _, inner = cls.__qualname__.rpartition(".")
        if outer:
            # every view nests an `InputSerializer`: name the OpenAPI component after the view
            # (`ContextInput`), or they all collide as one `InputRequest`
            name = outer.removesuffix("Api") + inner.removesuffix("Serializer")
            extend_schema_serializer(component_name=name)(cls)

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({unknown[0]: ["unknown field"]})
        return super().to_internal_value(data)


class StrictQuerySerializer(StrictSerializer):
    """A query string read with the same strict fields as a body: each number or boolean is
    parsed from its text by the field's `from_query()` first; an unknown parameter is refused."""

    def to_internal_value(self, data):
        values, errors = {}, {}
        for name in data:
            raw = data[name]  # a repeated parameter: its last value, as QueryDict gives it
            field = self.fields.get(name)
            try:
                values[name] = field.from_query(raw) if hasattr(field, "from_query") else raw
            except serializers.ValidationError as exc:
                errors[name] = exc.detail
        if errors:
            raise serializers.ValidationError(errors)
        return super().to_internal_value(values)


_ITEM_REF = re.compile(r"([nflp]):([0-9]+)")
ITEM_REF_MESSAGE = "item must look like n:ID (note), f:ID (fact), l:ID (lesson) or p:ID (procedure)"
# on the serializer field, so the schema gives the pattern; parse_item_ref() is the check that counts
item_ref_validator = RegexValidator(r"^[nflp]:[0-9]+\Z", message=ITEM_REF_MESSAGE)


def parse_item_ref(ref: str) -> tuple[str, int]:
    """'n:12' → ('note', 12); 'f:3' → ('fact', 3); 'l:4' lesson; 'p:5' procedure."""
    kinds = {"n": "note", "f": "fact", "l": "lesson", "p": "procedure"}
    match = _ITEM_REF.fullmatch(ref or "")  # [0-9], not isdigit(): "n:١" is no note 1
    if match is None:
        raise InvalidInput(ITEM_REF_MESSAGE, field="item")
    return kinds[match[1]], int(match[2])
