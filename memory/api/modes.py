"""The assistant modes over REST (docs/modes.md): every known mode, and one by name, each with
its manifest and a plain-language summary of what it does."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from memory.api.base import AppAPIView
from memory.modes import Mode, manifest_schema, mode_get, modes_all
from memory.modes.summary import mode_summary
from memoryweb.errors import InvalidInput, NotFound

_PROPS = manifest_schema()["properties"]
SCOPES = _PROPS["scopes"]["items"]["enum"]
KINDS = _PROPS["preferredKinds"]["items"]["enum"]
CATEGORIES = sorted(_PROPS["privacyCeiling"]["properties"]["allow"]["items"]["enum"])


def _cap(section: str) -> serializers.IntegerField:
    return serializers.IntegerField(required=False, help_text=f"token cap of ### {section}; 0 leaves it out")


class ModeSectionsOut(serializers.Serializer):
    """A section the manifest does not name keeps the App's configured cap (absent here)."""

    profile = _cap("profile")
    recalled = _cap("recalled")
    lessons = _cap("lessons")
    procedures = _cap("procedures")
    mental_models = _cap("mental_models")
    topics = _cap("topics")
    contract = _cap("contract")
    state = _cap("state")
    consequences = _cap("consequences")
    transcript = _cap("transcript (the recent transcript's budget)")

    def get_fields(self):
        fields = super().get_fields()
        fields["memory-index"] = _cap("memory-index")  # not a Python name
        return fields


class ModeWeightsOut(serializers.Serializer):
    applicability = serializers.FloatField(required=False)
    retrieval = serializers.FloatField(required=False)
    vitality = serializers.FloatField(required=False)
    confirmation = serializers.FloatField(required=False)


class ModeRetrievalOut(serializers.Serializer):
    k = serializers.IntegerField(required=False, help_text="notes and turns shown in full (### recalled)")
    candidates = serializers.IntegerField(required=False, help_text="candidates fetched per search list")
    indexLimit = serializers.IntegerField(required=False, help_text="pointers in ### memory-index")
    minApplicability = serializers.FloatField(
        required=False, help_text="items scoring below this applicability are not rendered"
    )
    weights = ModeWeightsOut(required=False, help_text="the score's weights (applicability.weights)")


class ModeApplicabilityOut(serializers.Serializer):
    personalization = serializers.FloatField()
    evidenceFirst = serializers.FloatField()
    uncertaintyTolerance = serializers.FloatField()
    emotionalSensitivity = serializers.FloatField()
    association = serializers.FloatField()


class ModeRendersOut(serializers.Serializer):
    contract = serializers.BooleanField()
    state = serializers.BooleanField()
    topics = serializers.BooleanField()
    transcript = serializers.BooleanField()
    consequences = serializers.BooleanField(
        help_text="earlier advice and what came of it, when the person is stuck (default true)"
    )


class PrivacyCeilingOut(serializers.Serializer):
    allow = serializers.ListField(
        child=serializers.ChoiceField(choices=CATEGORIES),
        help_text="consent categories that may render in this mode when approved; no other does",
    )


class ModeOut(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()
    builtin = serializers.BooleanField(help_text="false: a custom manifest from MEMORYWEB_MODES_DIR")
    default = serializers.BooleanField(help_text="the mode a conversation that names none runs in")
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=SCOPES),
        help_text="same: the conversation's scope; unscoped: items without one; other: other projects",
    )
    preferredKinds = serializers.ListField(
        child=serializers.ChoiceField(choices=KINDS), help_text="most preferred first"
    )
    privacyCeiling = PrivacyCeilingOut()
    sections = ModeSectionsOut(help_text="token caps per section; 0 leaves the section out")
    retrieval = ModeRetrievalOut()
    applicability = ModeApplicabilityOut(help_text="how the mode judges fit, each 0..1")
    renders = ModeRendersOut(help_text="what else the context carries")
    summary = serializers.ListField(
        child=serializers.CharField(), help_text="what the mode does, in plain sentences, from its manifest"
    )


class ModeListOut(serializers.Serializer):
    modes = ModeOut(many=True)


def mode_out(mode: Mode, *, default_name: str) -> dict:
    body = {
        **mode.as_dict(),
        "renders": dict(mode.renders),  # with the defaults a manifest may leave out
        "default": mode.name == default_name,
        "summary": mode_summary(mode),
    }
    return dict(ModeOut(body).data)


class ModesApi(AppAPIView):
    @extend_schema(
        responses={200: ModeListOut},
        operation_id="modes_list",
        summary="Every known assistant mode, the App's default first",
    )
    def get(self, request):
        default_name = self.config["modes.default"]
        modes = sorted(modes_all(), key=lambda m: m.name != default_name)  # stable: then by name
        return Response({"modes": [mode_out(m, default_name=default_name) for m in modes]})


class ModeApi(AppAPIView):
    @extend_schema(responses={200: ModeOut}, operation_id="mode_read", summary="One assistant mode by name")
    def get(self, request, name):
        try:
            mode = mode_get(name)
        except InvalidInput:
            raise NotFound(
                f"no mode {name!r}; GET /api/v1/modes lists the known ones", field="mode"
            ) from None
        return Response(mode_out(mode, default_name=self.config["modes.default"]))
