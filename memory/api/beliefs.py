"""Beliefs over REST (docs/layers.md): a subject's facts and notes as beliefs with their evidence,
versions and revisions, and the person's own revision of one (revision_apply, decided_by
"person")."""

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictQuerySerializer, StrictSerializer
from memory.api.fields import (
    ModeNameField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
)
from memory.beliefs import LAYERS
from memory.beliefs.read import (
    BELIEF_REF_MESSAGE,
    BeliefView,
    belief_get,
    belief_list,
    belief_ref,
    belief_revisions,
    belief_versions,
    evidence_ids_bulk,
    revision_as_dict,
    revision_list,
)
from memory.models import Note, Origin, ProfileFact, RevisionAction
from memory.services.beliefs import DECIDERS, MAX_REASON_CHARS, revision_apply
from memoryweb.errors import InvalidInput

BELIEF_ID_HELP = "f:ID (a fact: one version of a key) or n:ID (a note)"


# --- output shapes ------------------------------------------------------------------------
class ExceptionOut(serializers.Serializer):
    text = serializers.CharField()
    message_id = serializers.IntegerField(allow_null=True)
    at = serializers.CharField()


class BeliefOut(serializers.Serializer):
    id = serializers.CharField(help_text=BELIEF_ID_HELP)
    kind = serializers.ChoiceField(choices=["fact", "note"])
    layer = serializers.ChoiceField(choices=list(LAYERS), help_text="always belief")
    text = serializers.CharField(help_text='a fact as "key: value", a note\'s content')
    key = serializers.CharField(allow_null=True, help_text="facts only")
    value = serializers.CharField(allow_null=True, help_text="facts only")
    mode = serializers.CharField(help_text='the assistant mode it holds in; "" = every mode')
    scope = serializers.CharField()
    confidence = serializers.FloatField()
    active = serializers.BooleanField(help_text="false: closed (a fact) or archived (a note)")
    evidence = serializers.ListField(
        child=serializers.IntegerField(), help_text="the Evidence units it rests on, oldest first"
    )
    exceptions = ExceptionOut(many=True, help_text="facts: the named exceptions (MARK_EXCEPTION)")
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_to = serializers.DateTimeField(allow_null=True)
    archived_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class BeliefListOut(serializers.Serializer):
    beliefs = BeliefOut(many=True)


class RevisionBriefOut(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=RevisionAction.choices)
    reason = serializers.CharField()
    decided_by = serializers.ChoiceField(choices=list(DECIDERS))
    created_at = serializers.DateTimeField()


class BeliefVersionOut(serializers.Serializer):
    id = serializers.CharField(help_text="the row: f:ID per fact version; a note's versions share n:ID")
    version = serializers.IntegerField()
    text = serializers.CharField(help_text="a fact version's value, a note version's content")
    mode = serializers.CharField()
    scope = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True, help_text="facts only")
    active = serializers.BooleanField()
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_to = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    revision = RevisionBriefOut(allow_null=True, help_text="the revision that wrote this version, if one did")


class RevisionOut(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=RevisionAction.choices)
    belief = serializers.CharField(help_text="the belief revised (f:ID, n:ID)")
    results = serializers.ListField(
        child=serializers.CharField(), help_text="the rows the revision wrote or changed"
    )
    message = serializers.IntegerField(allow_null=True, help_text="the new evidence's message")
    claim = serializers.DictField(help_text="what the new evidence said")
    signals = serializers.ListField(child=serializers.CharField())
    reason = serializers.CharField()
    decided_by = serializers.ChoiceField(choices=list(DECIDERS))
    before = serializers.DictField(help_text="the belief as it was")
    after = serializers.DictField(help_text='what the revision left: {"rows": [...]}')
    created_at = serializers.DateTimeField()


class RevisionListOut(serializers.Serializer):
    revisions = RevisionOut(many=True)


class BeliefDetailOut(BeliefOut):
    versions = BeliefVersionOut(many=True)
    revisions = RevisionOut(many=True)


class RevisedOut(serializers.Serializer):
    revision = RevisionOut()
    beliefs = BeliefOut(many=True, help_text="the rows the revision left, as beliefs")


def _detail(belief) -> dict:
    view = BeliefView(belief, evidence_ids_bulk([belief])[belief_ref(belief)])
    return {
        **view.as_dict(),
        "versions": belief_versions(belief),
        "revisions": [revision_as_dict(r) for r in belief_revisions(belief)],
    }


# --- views --------------------------------------------------------------------------------
class BeliefsApi(AppAPIView):
    class QuerySerializer(StrictQuerySerializer):
        kind = StrictChoiceField(choices=["fact", "note"], required=False)
        q = StrictCharField(required=False, allow_blank=True, max_length=500, default="")
        archived = StrictBooleanField(
            required=False, default=False, help_text="include closed facts and archived notes"
        )
        limit = StrictIntegerField(required=False, min_value=1, max_value=200, default=50)

    @extend_schema(
        parameters=[QuerySerializer],
        responses={200: BeliefListOut},
        summary="List beliefs (facts and notes) with their evidence",
        operation_id="beliefs_list",
    )
    def get(self, request, subject):
        params = self.validated(self.QuerySerializer, request.query_params)
        views = belief_list(
            subject=self.subject(subject),
            kind=params.get("kind", ""),
            q=params["q"],
            archived=params["archived"],
            limit=params["limit"],
        )
        return Response({"beliefs": BeliefOut([v.as_dict() for v in views], many=True).data})


class BeliefApi(AppAPIView):
    @extend_schema(responses={200: BeliefDetailOut}, summary="Read a belief with its versions and revisions")
    def get(self, request, subject, belief_id):
        belief = belief_get(subject=self.subject(subject), ref=belief_id)
        return Response(BeliefDetailOut(_detail(belief)).data)


class RevisionsApi(AppAPIView):
    class QuerySerializer(StrictQuerySerializer):
        action = StrictChoiceField(choices=RevisionAction.choices, required=False)
        belief = StrictCharField(
            required=False,
            max_length=30,
            help_text=BELIEF_ID_HELP,
            validators=[RegexValidator(r"^[fn]:[0-9]+\Z", message=BELIEF_REF_MESSAGE)],
        )
        limit = StrictIntegerField(required=False, min_value=1, max_value=200, default=50)

    @extend_schema(
        parameters=[QuerySerializer],
        responses={200: RevisionListOut},
        summary="List belief revisions, newest first",
        operation_id="revisions_list",
    )
    def get(self, request, subject):
        params = self.validated(self.QuerySerializer, request.query_params)
        rows = revision_list(
            subject=self.subject(subject),
            action=params.get("action", ""),
            belief=params.get("belief", ""),
            limit=params["limit"],
        )
        return Response({"revisions": RevisionOut([revision_as_dict(r) for r in rows], many=True).data})


class BeliefReviseApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        action = StrictChoiceField(choices=RevisionAction.choices)
        reason = StrictCharField(max_length=MAX_REASON_CHARS, trim_whitespace=True)
        value = StrictCharField(
            required=False, max_length=2000, help_text="facts: the new value (SUPERSEDE, SPLIT_*)"
        )
        mode = ModeNameField(help_text="SPLIT_BY_MODE: the mode the new value holds in")
        scope = StrictCharField(
            required=False, allow_blank=True, max_length=200, help_text="SPLIT_BY_SCOPE: its scope"
        )
        text = StrictCharField(required=False, max_length=300, help_text="MARK_EXCEPTION: what is excepted")
        note = StrictIntegerField(
            required=False, min_value=1, help_text="notes: the newer note that bears on it (n:ID's ID)"
        )

    @extend_schema(
        request=InputSerializer,
        responses={201: RevisedOut},
        summary="Revise a belief yourself (kept in its history with your reason)",
    )
    def post(self, request, subject, belief_id):
        data = self.validated(self.InputSerializer, request.data)
        subj = self.subject(subject)
        belief = belief_get(subject=subj, ref=belief_id)
        if isinstance(belief, Note):
            for fact_only in ("value", "text"):
                if fact_only in data:
                    raise InvalidInput(f"{fact_only} revises a fact; a note takes `note`", field=fact_only)
            if (
                "note" in data
                and not Note.objects.filter(pk=data["note"], subject=subj).exclude(pk=belief.pk).exists()
            ):
                raise InvalidInput(f"no other note {data['note']} for this subject", field="note")
        elif "note" in data:
            raise InvalidInput("note names the newer note of a note's revision", field="note")
        claim = {k: data[k] for k in ("value", "scope", "text") if data.get(k)}
        if data.get("mode"):
            claim["mode"] = data["mode"]
        if "note" in data:
            claim["note_id"] = data["note"]
        revision = revision_apply(
            subject=subj,
            belief=belief,
            action=data["action"],
            reason=data["reason"],
            claim=claim,
            decided_by="person",
            actor=self.actor,
            config=self.config,
            origin=Origin.API,
        )
        model = ProfileFact if revision.belief_kind == "fact" else Note
        rows = list(model.objects.filter(pk__in=revision.result_ids).order_by("id"))
        evidence = evidence_ids_bulk(rows)
        views = [BeliefView(r, evidence[belief_ref(r)]) for r in rows]
        body = {"revision": revision_as_dict(revision), "beliefs": [v.as_dict() for v in views]}
        return Response(RevisedOut(body).data, status=status.HTTP_201_CREATED)
