"""The API's input fields: each takes exactly its JSON type and nothing DRF would coerce into it.

DRF's own fields are lenient: a CharField takes `12345` as "12345", an IntegerField takes "12"
and `1.0`, a BooleanField takes "yes", 1 and "on", and `int()` reads "١" (an Arabic-Indic digit)
as 1. Every serializer of the API declares these instead, so a value of the wrong JSON type is a
400 naming its field. A query string has no types: `StrictQuerySerializer` reads a number or a
boolean out of it with `from_query()` (ASCII digits; `true`/`false`) before the field sees it.
"""

import re

from rest_framework import serializers

_ASCII_INTEGER = re.compile(r"-?[0-9]+")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class StrictCharField(serializers.CharField):
    """A JSON string; never a number or a boolean turned into one."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    """A JSON string among the choices (DRF would match `1` to a choice "1")."""

    default_error_messages = {"not_a_string": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: not a string of digits, not `1.0`, not `true`."""

    def to_internal_value(self, data):
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)

    def from_query(self, raw: str):
        if not _ASCII_INTEGER.fullmatch(raw):
            self.fail("invalid")
        return int(raw)


class StrictFloatField(serializers.FloatField):
    """A JSON number (an integer is one too); not a string, not a boolean."""

    def to_internal_value(self, data):
        if not _is_number(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """`true` or `false`; not "yes", not 1."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data

    def from_query(self, raw: str):
        if raw not in ("true", "false"):
            self.fail("invalid")
        return raw == "true"


class StrictDateTimeField(serializers.DateTimeField):
    """An ISO 8601 time as a JSON string, in ASCII digits."""

    def to_internal_value(self, value):
        if not isinstance(value, str) or not value.isascii():
            self.fail("invalid", format="YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]")
        return super().to_internal_value(value)


class StrictListField(serializers.ListField):
    """A JSON array whose items the `child` field checks."""

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        return super().to_internal_value(data)


STRICT_FIELDS = (
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictFloatField,
    StrictBooleanField,
    StrictDateTimeField,
    StrictListField,
)
