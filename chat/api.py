"""The conversation endpoints of the REST sidecar: conversations, messages, responses."""

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from chat.selectors import background_wait
from chat.services import messages_add, response_add
from memory.api.base import AppAPIView, StrictQuerySerializer, StrictSerializer
from memory.api.fields import (
    ModeNameField,
    ProfileField,
    SpeakerNameField,
    StrictCharField,
    StrictChoiceField,
    StrictDateTimeField,
    StrictIntegerField,
    SubjectField,
)
from memory.models import Role
from memory.profiles import profile_check
from memory.selectors import conversation_list, message_list
from memory.services.conversations import conversation_get_or_create

MAX_BATCH = 500


class ConversationOut(serializers.Serializer):
    id = serializers.IntegerField()
    subject = serializers.CharField(source="subject.external_id")
    external_id = serializers.CharField()
    mode = serializers.CharField()
    scope = serializers.CharField()
    working_dir = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class MessageOut(serializers.Serializer):
    id = serializers.IntegerField()
    conversation = serializers.IntegerField(source="conversation_id")
    role = serializers.CharField()
    name = serializers.CharField(help_text='who said it ("" when the app did not say)')
    text = serializers.CharField()
    occurred_at = serializers.DateTimeField()
    external_id = serializers.CharField()
    created_at = serializers.DateTimeField()


class ConversationListOut(serializers.Serializer):
    conversations = ConversationOut(many=True)


class ConversationDetailOut(ConversationOut):
    message_count = serializers.IntegerField()


class MessageListOut(serializers.Serializer):
    messages = MessageOut(many=True)


class ConversationsApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        subject = SubjectField()
        external_id = StrictCharField(required=False, allow_blank=True, max_length=200, default="")
        mode = ModeNameField(help_text='the assistant mode it runs in (GET /api/v1/modes); "" = the default')
        scope = StrictCharField(required=False, allow_blank=True, max_length=200, default="")
        working_dir = StrictCharField(required=False, allow_blank=True, max_length=500, default="")

    class QuerySerializer(StrictQuerySerializer):
        subject = SubjectField()
        limit = StrictIntegerField(required=False, min_value=1, max_value=500, default=50)

    @extend_schema(
        parameters=[QuerySerializer], responses={200: ConversationListOut}, operation_id="conversations_list"
    )
    def get(self, request):
        params = self.validated(self.QuerySerializer, request.query_params)
        conversations = conversation_list(subject=self.subject(params["subject"]), limit=params["limit"])
        return Response({"conversations": ConversationOut(conversations, many=True).data})

    @extend_schema(
        request=InputSerializer,
        responses={201: ConversationOut, 200: ConversationOut},
        summary="Open a conversation (or get the one with this external id)",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        subject = self.subject(data.pop("subject"), create=True)
        conversation, created = conversation_get_or_create(subject=subject, actor=self.actor, **data)
        return Response(
            ConversationOut(conversation).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class ConversationApi(AppAPIView):
    @extend_schema(responses={200: ConversationDetailOut})
    def get(self, request, conversation_id):
        conversation = self.conversation(conversation_id)
        data = ConversationOut(conversation).data
        data["message_count"] = conversation.messages.count()
        return Response(data)


class MessageIn(StrictSerializer):
    role = StrictChoiceField(choices=Role.choices, required=False, default=Role.USER)
    name = SpeakerNameField()
    text = StrictCharField(max_length=100_000, trim_whitespace=False)
    occurred_at = StrictDateTimeField(required=False)
    external_id = StrictCharField(required=False, allow_blank=True, max_length=200, default="")


class SingleMessageIn(MessageIn):
    profile = ProfileField()


class MessagesApi(AppAPIView):
    class BatchSerializer(StrictSerializer):
        messages = MessageIn(many=True, max_length=MAX_BATCH, allow_empty=False)  # type: ignore[call-arg]
        profile = ProfileField()

    class QuerySerializer(StrictQuerySerializer):
        limit = StrictIntegerField(required=False, min_value=1, max_value=1000, default=100)
        before = StrictIntegerField(required=False, min_value=1)

    @extend_schema(parameters=[QuerySerializer], responses={200: MessageListOut})
    def get(self, request, conversation_id):
        params = self.validated(self.QuerySerializer, request.query_params)
        messages = message_list(
            conversation=self.conversation(conversation_id),
            limit=params["limit"],
            before_id=params.get("before"),
        )
        return Response({"messages": MessageOut(messages, many=True).data})

    @extend_schema(
        request=PolymorphicProxySerializer(
            "MessageOrBatch", serializers=[SingleMessageIn, BatchSerializer], resource_type_field_name=None
        ),
        responses={
            code: PolymorphicProxySerializer(
                "MessageOrList", serializers=[MessageOut, MessageListOut], resource_type_field_name=None
            )
            for code in (201, 200)
        },
        summary='Post a message, or a batch as {"messages": [...]} (all or nothing)',
    )
    def post(self, request, conversation_id):
        conversation = self.conversation(conversation_id)
        if isinstance(request.data, dict) and "messages" in request.data:
            data = self.validated(self.BatchSerializer, request.data)
            items = data["messages"]
        else:
            data = self.validated(SingleMessageIn, request.data)
            items = [{k: v for k, v in data.items() if k != "profile"}]
        profile = profile_check(data["profile"], self.config)
        results = messages_add(
            conversation=conversation, items=items, actor=self.actor, profile=profile
        )  # all or none
        created = any(c for _, c in results)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        if len(items) == 1 and "messages" not in request.data:
            return Response(MessageOut(results[0][0]).data, status=code)
        return Response({"messages": MessageOut([m for m, _ in results], many=True).data}, status=code)


class ResponsesApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        text = StrictCharField(max_length=100_000, trim_whitespace=False)
        name = SpeakerNameField(
            help_text="the assistant's name, when there are several (one of several agents)"
        )
        occurred_at = StrictDateTimeField(required=False)
        external_id = StrictCharField(required=False, allow_blank=True, max_length=200, default="")
        profile = ProfileField()

    @extend_schema(
        request=InputSerializer,
        responses={201: MessageOut, 200: MessageOut},
        summary="Post the assistant's reply",
    )
    def post(self, request, conversation_id):
        data = self.validated(self.InputSerializer, request.data)
        data["profile"] = profile_check(data["profile"], self.config)
        message, created = response_add(
            conversation=self.conversation(conversation_id), actor=self.actor, **data
        )
        return Response(
            MessageOut(message).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class FlushApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        subject = SubjectField()
        conversation = StrictIntegerField(required=False, min_value=1)
        timeout_ms = StrictIntegerField(required=False, min_value=0, max_value=60_000, default=10_000)

    @extend_schema(
        request=InputSerializer,
        responses={
            200: inline_serializer(
                "FlushResult",
                {
                    "done": serializers.BooleanField(help_text="nothing pending and nothing dead"),
                    "pending": serializers.IntegerField(help_text="reflections + jobs still open"),
                    "reflections": serializers.IntegerField(),
                    "jobs": serializers.IntegerField(help_text="the subject's queued or running job runs"),
                    "dead": serializers.IntegerField(
                        help_text="runs whose worker stopped heartbeating: not waited on; the "
                        "sweeper marks them abandoned and redoes their work"
                    ),
                    "waited_ms": serializers.FloatField(),
                },
            )
        },
        summary="Wait until the background work of a subject or conversation is done",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        subject = self.subject(data["subject"])
        if "conversation" in data:
            ids = [self.conversation(data["conversation"], subject=subject).pk]
        else:
            ids = list(subject.conversations.values_list("pk", flat=True))
        background = background_wait(
            conversation_ids=ids, subject_id=subject.pk, timeout=data["timeout_ms"] / 1000
        )
        return Response(
            {
                "done": background.pending == 0 and background.dead == 0,
                "pending": background.pending,
                "reflections": background.reflections,
                "jobs": background.jobs,
                "dead": background.dead,
                "waited_ms": round(background.waited * 1000, 1),
            }
        )
