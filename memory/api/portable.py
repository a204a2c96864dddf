"""A subject's memory as one portable document (docs/export.md): GET /subjects/{subject}
exports it (memory/api/consent.py SubjectApi), POST /subjects/{subject}/import brings it into
the caller's App.

The serializers here describe the document in the OpenAPI schema, as the export answers it and
as the import reads it (strict: an unknown field, a wrong type, a missing field is a 400 naming
it). memory/schemas/subject-export.v1.json says the same as JSON Schema, for other tools; the
import service checks a document against that file too.
"""

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictSerializer
from memory.api.fields import (
    SpeakerNameField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictDateTimeField,
    StrictDictField,
    StrictFloatField,
    StrictIntegerField,
    StrictListField,
)
from memory.api.schema import error_response
from memory.models import (
    EvidenceStatus,
    ItemKind,
    LinkKind,
    Origin,
    PendingStatus,
    Policy,
    Role,
    Signal,
    Subject,
)
from memory.selectors import EXPORT_FORMAT, EXPORT_VERSION
from memory.services.portable import subject_import


def _text(**kwargs):
    kwargs.setdefault("allow_blank", True)
    return StrictCharField(trim_whitespace=False, **kwargs)


def _texts():
    return StrictListField(child=_text())


def _when(**kwargs):
    return StrictDateTimeField(**kwargs)


def _maybe_when(**kwargs):
    return StrictDateTimeField(allow_null=True, **kwargs)


MAX_ID = 2**63 - 1
PARKED_HELP = "set while the person has parked it: kept, never in any context (absent: not parked)"


def _id(**kwargs):
    return StrictIntegerField(min_value=1, max_value=MAX_ID, **kwargs)


def _ref(**kwargs):
    return StrictIntegerField(min_value=1, max_value=MAX_ID, allow_null=True, **kwargs)


def _count():
    return StrictIntegerField(min_value=0, max_value=2**31 - 1)


def _origin():
    return StrictChoiceField(choices=Origin.choices)


class ExportFactSerializer(StrictSerializer):
    id = _id()
    key = _text(max_length=100, allow_blank=False)
    value = _text()
    pinned = StrictBooleanField()
    keywords = _texts()
    mode = _text(max_length=50)
    scope = _text(max_length=200)
    category = _text(max_length=40)
    origin = _origin()
    confidence = StrictFloatField()
    confirmations = _count()
    vote_score = StrictFloatField()
    exceptions = StrictListField(
        child=StrictDictField(), help_text='where the fact does not hold: {"text", "message_id", "at"}'
    )
    source_message = _ref(help_text="the message (its export id) it was learned from")
    valid_from = _when()
    valid_to = _maybe_when(help_text="null while it holds")
    parked_at = _maybe_when(required=False, help_text=PARKED_HELP)
    recorded_at = _when()
    superseded_by = _ref(help_text="the fact version (its export id) that replaced it")


class ExportNoteVersionSerializer(StrictSerializer):
    version = StrictIntegerField(min_value=1, max_value=2**31 - 1)
    content = _text()
    tags = _texts()
    origin = _origin()
    created_at = _when()


class ExportNoteSourceSerializer(StrictSerializer):
    conversation = _ref()
    message = _ref()
    created_at = _when()


class ExportNoteSerializer(StrictSerializer):
    id = _id()
    content = _text(allow_blank=False)
    tags = _texts()
    mode = _text(max_length=50)
    scope = _text(max_length=200)
    working_dir = _text(max_length=500)
    category = _text(max_length=40)
    origin = _origin()
    confidence = StrictFloatField()
    version = StrictIntegerField(min_value=1, max_value=2**31 - 1)
    conversation = _ref()
    source_message = _ref()
    occurred_at = _maybe_when()
    vote_score = StrictFloatField()
    recall_count = _count()
    last_recalled_at = _maybe_when()
    archived_at = _maybe_when()
    parked_at = _maybe_when(required=False, help_text=PARKED_HELP)
    consolidated_into = _ref(help_text="the lesson (its export id) it was distilled into")
    created_at = _when()
    updated_at = _when()
    versions = StrictListField(child=ExportNoteVersionSerializer())
    sources = StrictListField(child=ExportNoteSourceSerializer())


class ExportLinkSerializer(StrictSerializer):
    src = _id()
    dst = _id()
    kind = StrictChoiceField(choices=LinkKind.choices)
    weight = StrictFloatField()
    origin = _origin()
    created_at = _when()


class ExportLessonVersionSerializer(StrictSerializer):
    version = StrictIntegerField(min_value=1, max_value=2**31 - 1)
    text = _text()
    tags = _texts()
    origin = _origin()
    created_at = _when()


class ExportLessonSerializer(StrictSerializer):
    id = _id()
    text = _text(allow_blank=False)
    tags = _texts()
    vote_score = StrictFloatField()
    recall_count = _count()
    last_recalled_at = _maybe_when()
    parked_at = _maybe_when(required=False, help_text=PARKED_HELP)
    origin = _origin()
    distiller = _text(max_length=120)
    version = StrictIntegerField(min_value=1, max_value=2**31 - 1)
    created_at = _when()
    updated_at = _when()
    versions = StrictListField(child=ExportLessonVersionSerializer())


class ExportProcedureVersionSerializer(StrictSerializer):
    version = StrictIntegerField(min_value=1, max_value=2**31 - 1)
    title = _text(max_length=200)
    steps = _texts()
    tags = _texts()
    origin = _origin()
    created_at = _when()


class ExportProcedureSerializer(StrictSerializer):
    id = _id()
    lesson = _ref()
    title = _text(max_length=200, allow_blank=False)
    steps = _texts()
    tags = _texts()
    vote_score = StrictFloatField()
    recall_count = _count()
    last_recalled_at = _maybe_when()
    parked_at = _maybe_when(required=False, help_text=PARKED_HELP)
    origin = _origin()
    distiller = _text(max_length=120)
    version = StrictIntegerField(min_value=1, max_value=2**31 - 1)
    created_at = _when()
    updated_at = _when()
    versions = StrictListField(child=ExportProcedureVersionSerializer())


class ExportVoteSerializer(StrictSerializer):
    item_kind = StrictChoiceField(choices=ItemKind.choices)
    item_id = _id(help_text="the voted item's export id")
    signal = StrictChoiceField(choices=Signal.choices)
    delta = StrictFloatField()
    mode = _text(max_length=50)
    actor = _text(max_length=200)
    created_at = _when()


class ExportEvidenceSerializer(StrictSerializer):
    id = _id()
    subject = _text()
    conversation = _id()
    message = _id()
    role = StrictChoiceField(choices=Role.choices)
    name = SpeakerNameField(help_text='its message\'s speaker name (absent or "": none)')
    text = _text()
    scope = _text(max_length=200)
    vote_score = StrictFloatField()
    occurred_at = _when()
    category = _text(max_length=40)
    status = StrictChoiceField(choices=EvidenceStatus.choices)
    retrievable = StrictBooleanField()
    recall_count = _count()
    last_recalled_at = _maybe_when()
    archived_at = _maybe_when()
    created_at = _when()


class ExportMessageSerializer(StrictSerializer):
    id = _id()
    role = StrictChoiceField(choices=Role.choices)
    name = SpeakerNameField(help_text='who said it (absent or "": not said)')
    text = _text()
    occurred_at = _when()
    external_id = _text(max_length=200)
    created_at = _when()


class ExportConversationSerializer(StrictSerializer):
    id = _id()
    external_id = _text(max_length=200)
    mode = _text(max_length=50)
    scope = _text(max_length=200)
    working_dir = _text(max_length=500)
    created_at = _when()
    updated_at = _when()
    messages = StrictListField(child=ExportMessageSerializer())


class ExportPendingSerializer(StrictSerializer):
    id = _id()
    kind = StrictChoiceField(choices=ItemKind.choices)
    payload = StrictDictField(help_text="what would be stored")
    category = _text(max_length=40, allow_blank=False)
    status = StrictChoiceField(choices=PendingStatus.choices)
    content_hash = _text(max_length=64)
    source_message = _ref()
    decided_at = _maybe_when()
    decided_by = _text(max_length=200)
    result_id = _ref(help_text="the item an approval wrote (this server's id, not remapped)")
    created_at = _when()


class SubjectExportSerializer(StrictSerializer):
    """The document: docs/export.md says what each field means."""

    format = StrictChoiceField(choices=[EXPORT_FORMAT])
    version = StrictIntegerField(min_value=EXPORT_VERSION, max_value=EXPORT_VERSION)
    subject = _text(help_text="the subject's external id where it was exported")
    display_name = _text(max_length=200)
    app = _text(help_text="the App it was exported from")
    exported_at = _when()
    facts = StrictListField(child=ExportFactSerializer(), help_text="every version, closed ones too")
    notes = StrictListField(child=ExportNoteSerializer(), help_text="with their versions and sources")
    links = StrictListField(child=ExportLinkSerializer(), help_text="between the notes")
    lessons = StrictListField(child=ExportLessonSerializer(), help_text="with their versions")
    procedures = StrictListField(child=ExportProcedureSerializer(), help_text="with their versions")
    votes = StrictListField(child=ExportVoteSerializer(), help_text="every vote event")
    evidence = StrictListField(child=ExportEvidenceSerializer(), help_text="the turns as memories")
    conversations = StrictListField(child=ExportConversationSerializer(), help_text="with their messages")
    consent = StrictDictField(
        child=StrictChoiceField(choices=Policy.choices), help_text="the subject's own policy per category"
    )
    pending = StrictListField(child=ExportPendingSerializer(), help_text="the consent queue")


class SubjectImportOut(serializers.Serializer):
    subject = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="rows written per kind")


class SubjectImportApi(AppAPIView):
    @extend_schema(
        request=SubjectExportSerializer,
        responses={201: SubjectImportOut, 409: error_response(409)},
        summary="Import an exported subject into this App",
        description="The document is what GET /subjects/{subject} answers (docs/export.md). The "
        "subject must hold no memory yet (409 `exists` otherwise). All or nothing.",
    )
    @transaction.atomic
    def post(self, request, subject):
        self.validated(SubjectExportSerializer, request.data)
        existing = Subject.objects.filter(app=self.app, external_id=subject).first()
        if existing is not None:
            self.subject_check(existing)
        counts = subject_import(
            app=self.app, external_id=subject, document=request.data, actor=self.actor, config=self.config
        )
        return Response({"subject": subject, "counts": counts}, status=status.HTTP_201_CREATED)
