"""The person over REST (issue 13): a conversation's state (urgency, focus, frustration) and the
subject's consequence chains (list, read, correct, delete)."""

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictQuerySerializer, StrictSerializer
from memory.api.fields import StrictCharField, StrictChoiceField, StrictIntegerField
from memory.models import Consequence, Origin, Outcome
from memory.person.consequences import MAX_ACTION_CHARS, MAX_OUTCOME_CHARS, MAX_TENDENCY_CHARS
from memory.person.state import state_read
from memory.services.consequences import consequence_delete, consequence_edit
from memoryweb.errors import InvalidInput, NotFound


class LevelsOut(serializers.Serializer):
    urgency = serializers.FloatField(min_value=0, max_value=1)
    focus = serializers.FloatField(min_value=0, max_value=1)
    frustration = serializers.FloatField(min_value=0, max_value=1)


class StateSignalOut(serializers.Serializer):
    message = serializers.IntegerField(allow_null=True, help_text="The user message that moved the levels.")
    at = serializers.CharField(allow_null=True, help_text="When it was observed (ISO 8601).")
    urgency = serializers.ListField(child=serializers.CharField(), help_text="The cues that pushed urgency.")
    focus = serializers.ListField(child=serializers.CharField())
    frustration = serializers.ListField(child=serializers.CharField())
    topic_changed = serializers.BooleanField(
        help_text="The message left the previous one's topic (focus halved)."
    )


class ConversationStateOut(serializers.Serializer):
    conversation = serializers.IntegerField()
    levels = LevelsOut(help_text="Each level decayed to now (halved every half_life_minutes).")
    raw = LevelsOut(help_text="The levels as stored at updated_at.")
    signals = StateSignalOut(many=True, help_text="What moved them, newest first.")
    messages = serializers.IntegerField(help_text="User messages observed.")
    last_message = serializers.IntegerField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)
    half_life_minutes = serializers.FloatField()
    min_level = serializers.FloatField(help_text="The level from which `### state` shows a dimension.")
    lines = serializers.ListField(child=serializers.CharField(), help_text="What `### state` shows now.")


class ConversationStateApi(AppAPIView):
    @extend_schema(
        responses={200: ConversationStateOut},
        summary="The person's state in a conversation (urgency, focus, frustration)",
        operation_id="conversation_state",
    )
    def get(self, request, conversation_id):
        conversation = self.conversation(conversation_id)
        return Response(state_read(conversation=conversation, config=self.config, now=timezone.now()))


class ConsequenceOut(serializers.Serializer):
    id = serializers.IntegerField()
    conversation = serializers.IntegerField(source="conversation_id", allow_null=True)
    advice_message = serializers.IntegerField(
        source="advice_message_id", allow_null=True, help_text="The assistant turn whose advice it was."
    )
    outcome_message = serializers.IntegerField(
        source="outcome_message_id", allow_null=True, help_text="The person's report of what came of it."
    )
    action = serializers.CharField(help_text="The advice, in short.")
    outcome = serializers.ChoiceField(choices=Outcome.choices)
    outcome_text = serializers.CharField(help_text="What came of it, in short.")
    tendency = serializers.CharField(allow_blank=True, help_text="What it says about the setting.")
    mode = serializers.CharField(allow_blank=True)
    scope = serializers.CharField(allow_blank=True)
    confidence = serializers.FloatField(min_value=0, max_value=1)
    origin = serializers.ChoiceField(choices=Origin.choices)
    surfaced_count = serializers.IntegerField(help_text="How often a recorded context showed it.")
    last_surfaced_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class ConsequenceListOut(serializers.Serializer):
    consequences = ConsequenceOut(many=True)


def _chain(subject, consequence_id: int) -> Consequence:
    chain = Consequence.objects.filter(subject=subject, pk=consequence_id).first()
    if chain is None:
        raise NotFound(f"no consequence {consequence_id} for this subject", field="id")
    return chain


class ConsequencesApi(AppAPIView):
    class ListQuery(StrictQuerySerializer):
        outcome = StrictChoiceField(choices=Outcome.choices, required=False)
        conversation = StrictIntegerField(required=False, min_value=1)
        limit = StrictIntegerField(required=False, min_value=1, max_value=200, default=50)

    @extend_schema(
        parameters=[ListQuery],
        responses={200: ConsequenceListOut},
        summary="List the subject's consequence chains, newest first",
        operation_id="consequences_list",
    )
    def get(self, request, subject):
        params = self.validated(self.ListQuery, request.query_params)
        chains = Consequence.objects.filter(subject=self.subject(subject))
        if "outcome" in params:
            chains = chains.filter(outcome=params["outcome"])
        if "conversation" in params:
            chains = chains.filter(conversation_id=params["conversation"])
        rows = chains.order_by("-created_at", "-id")[: params["limit"]]
        return Response({"consequences": ConsequenceOut(rows, many=True).data})


class ConsequenceApi(AppAPIView):
    class EditSerializer(StrictSerializer):
        min_fields = 1

        action = StrictCharField(required=False, max_length=MAX_ACTION_CHARS)
        outcome = StrictChoiceField(choices=Outcome.choices, required=False)
        outcome_text = StrictCharField(required=False, max_length=MAX_OUTCOME_CHARS)
        tendency = StrictCharField(required=False, allow_blank=True, max_length=MAX_TENDENCY_CHARS)

    @extend_schema(responses={200: ConsequenceOut}, summary="Read a consequence chain")
    def get(self, request, subject, consequence_id):
        return Response(ConsequenceOut(_chain(self.subject(subject), consequence_id)).data)

    @extend_schema(
        request=EditSerializer,
        responses={200: ConsequenceOut},
        summary="Correct a consequence chain (its action, outcome or tendency)",
    )
    def patch(self, request, subject, consequence_id):
        data = self.validated(self.EditSerializer, request.data)
        if not data:
            raise InvalidInput("give action, outcome, outcome_text or tendency to change", field="tendency")
        chain = consequence_edit(
            consequence=_chain(self.subject(subject), consequence_id), actor=self.actor, **data
        )
        return Response(ConsequenceOut(chain).data)

    @extend_schema(responses={204: None}, summary="Delete a consequence chain (its messages stay)")
    def delete(self, request, subject, consequence_id):
        consequence_delete(consequence=_chain(self.subject(subject), consequence_id), actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)
