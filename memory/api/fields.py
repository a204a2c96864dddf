"""The API's input fields: each takes exactly its JSON type and nothing DRF would coerce into it.

DRF's own fields are lenient: a CharField takes `12345` as "12345", an IntegerField takes "12"
and `1.0`, a BooleanField takes "yes", 1 and "on", and `int()` reads "١" (an Arabic-Indic digit)
as 1. Every serializer of the API declares these instead, so a value of the wrong JSON type is a
400 naming its field. A query string has no types: `StrictQuerySerializer` reads a number or a
boolean out of it with `from_query()` (ASCII digits; `true`/`false`) before the field sees it.
"""

import re

from django.core.validators import RegexValidator
from rest_framework import serializers

from memory.models import MESSAGE_NAME_CHARS, MESSAGE_NAME_EXCLUDED
from memoryweb.profiles import DEFAULT_PROFILE, PROFILES

_ASCII_INTEGER = re.compile(r"-?[0-9]+")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# what str.strip() strips (str.isspace()); ECMA's \s differs (no \x1c-\x1f or \x85, but \ufeff)
_SPACE = r"\t\n\x0b\x0c\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def text_pattern(*, blank: bool, exclude: str = "") -> str:
    """The JSON Schema pattern of a string field: no NUL (DRF refuses it) nor `exclude`, and unless
    `blank`, one character that is not whitespace. Valid in Python and in ECMA regexes alike."""
    if blank:
        return rf"^[^\x00{exclude}]*$"
    return rf"^[^\x00{exclude}]*[^\x00{exclude}{_SPACE}][^\x00{exclude}]*$"


class StrictCharField(serializers.CharField):
    """A JSON string; never a number or a boolean turned into one. Unless `allow_blank`, a string
    of whitespace only is blank, whether or not the field trims it (the schema: text_pattern()).
    A subclass's `excluded` (a regex character range) names characters the string may not hold,
    checked as sent; the schema's pattern excludes them too."""

    excluded = ""
    default_error_messages = {"excluded": "This field may not hold control characters."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)

    def run_validation(self, data=serializers.empty):
        if isinstance(data, str) and self.excluded and re.search(f"[{self.excluded}]", data):
            self.fail("excluded")
        if isinstance(data, str) and not self.allow_blank and not data.strip():
            self.fail("blank")
        # the length the schema's maxLength counts is the string as sent, before DRF trims it
        if isinstance(data, str) and self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().run_validation(data)


class SubjectField(StrictCharField):
    """A subject's external id, as subject_get_or_create() takes it."""

    def __init__(self, **kwargs):
        no_slash = RegexValidator(
            text_pattern(blank=False, exclude="/"), message="subject must be 1–200 characters without '/'"
        )
        super().__init__(max_length=200, validators=[no_slash], **kwargs)


class StrictChoiceField(serializers.ChoiceField):
    """A JSON string among the choices (DRF would match `1` to a choice "1")."""

    default_error_messages = {"not_a_string": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class ProfileField(StrictChoiceField):
    """The operational profile a request runs under (memoryweb/profiles.py); "normal" when
    left out. Whether the App may use it is the view's check (memory/profiles.py)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", DEFAULT_PROFILE)
        kwargs.setdefault(
            "help_text",
            "operational profile (normal, low_power, offline; emergency and disaster where the App "
            "allows them): offline and low_power make no model or remote embedding calls",
        )
        super().__init__(choices=list(PROFILES), **kwargs)


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


class TagField(StrictCharField):
    """A note's tag as note_store() takes it (a space becomes '-', the case is folded)."""

    def __init__(self, **kwargs):
        rule = RegexValidator(r"^\w[\w:./ -]{0,49}$", message="a tag is 1–50 letters, digits and : . / - _")
        super().__init__(max_length=50, validators=[rule], **kwargs)


class ConsentCategoryField(StrictCharField):
    """A consent category's slug; the schema lists the slugs there are (memory/api/schema.py)."""

    def __init__(self, **kwargs):
        super().__init__(max_length=40, **kwargs)


class SpeakerNameField(StrictCharField):
    """Who said a message ("Melanie"), when the app knows: optional, one line (no control
    character), at most MESSAGE_NAME_CHARS characters, checked as sent; the service trims it
    (memory.services.conversations.speaker_name)."""

    excluded = MESSAGE_NAME_EXCLUDED
    default_error_messages = {"excluded": "name must be one line, without control characters"}

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", "")
        kwargs.setdefault(
            "help_text",
            "who said it (a group chat's member, one of several agents); shown beside the turn "
            'in the context ("Melanie: …") and searched with it',
        )
        super().__init__(max_length=MESSAGE_NAME_CHARS, allow_blank=True, trim_whitespace=False, **kwargs)


class ModeNameField(StrictCharField):
    """An assistant mode's name; "" means none (the conversation's mode, or the App's default). The
    service checks it is known (`mode_get`); the schema lists the known modes (memory/api/schema.py)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", "")
        super().__init__(max_length=50, allow_blank=True, **kwargs)


class StrictDictField(serializers.DictField):
    """A JSON object (DRF's DictField already refuses anything else); its values are taken as
    they are, for the view to check (a tool call's `input`, checked against the tool's schema)."""


STRICT_FIELDS = (
    StrictCharField,
    StrictDictField,
    StrictChoiceField,
    StrictIntegerField,
    StrictFloatField,
    StrictBooleanField,
    StrictDateTimeField,
    StrictListField,
)
