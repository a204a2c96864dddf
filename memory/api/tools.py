"""The memory tools over REST: their definitions in the OpenAI or Anthropic shape, and one endpoint
that runs a model's tool call in a conversation's context and answers with what the SDK takes
back (memory/tools/registry.py)."""

from types import SimpleNamespace

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictQuerySerializer, StrictSerializer
from memory.api.fields import StrictCharField, StrictChoiceField, StrictDictField, StrictIntegerField
from memory.tools import FORMATS, ToolContext, definitions, tool_execute, tool_result_message


class OpenAIFunctionOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.DictField(help_text="JSON schema of the arguments")


class OpenAIToolOut(serializers.Serializer):
    type = serializers.ChoiceField(choices=["function"])
    function = OpenAIFunctionOut()


class AnthropicToolOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    input_schema = serializers.DictField(help_text="JSON schema of the arguments")


class ToolListOut(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS)
    tools = serializers.SerializerMethodField(help_text="Pass as `tools=` to the SDK.")

    @extend_schema_field(
        PolymorphicProxySerializer(
            component_name="ToolDefinition",
            serializers=[OpenAIToolOut, AnthropicToolOut],
            resource_type_field_name=None,
            many=True,  # every item in the one shape `format` names
        )
    )
    def get_tools(self, obj) -> list:
        return obj["tools"]


class OpenAIToolMessageOut(serializers.Serializer):
    role = serializers.ChoiceField(choices=["tool"])
    tool_call_id = serializers.CharField()
    content = serializers.CharField(help_text='The tool\'s JSON result, or {"error": …}')


class AnthropicToolResultOut(serializers.Serializer):
    type = serializers.ChoiceField(choices=["tool_result"])
    tool_use_id = serializers.CharField()
    content = serializers.CharField(help_text='The tool\'s JSON result, or {"error": …}')
    is_error = serializers.BooleanField(required=False, help_text="Present (true) when the call failed.")


class ToolErrorOut(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    field = serializers.CharField(required=False)


class ToolCallOut(serializers.Serializer):
    tool = serializers.CharField(help_text="The tool's dotted name (memory.profile.set)")
    ok = serializers.BooleanField()
    result = serializers.SerializerMethodField(
        help_text="Append to the conversation as the SDK expects: OpenAI a `role: tool` message, "
        "Anthropic a `tool_result` block of the next user message."
    )
    output = serializers.DictField(help_text='The tool\'s result as JSON (on failure: {"error": …})')
    error = ToolErrorOut(allow_null=True, help_text="null when the call succeeded")

    @extend_schema_field(
        PolymorphicProxySerializer(
            component_name="ToolCallResult",
            serializers=[OpenAIToolMessageOut, AnthropicToolResultOut],
            resource_type_field_name=None,
        )
    )
    def get_result(self, obj) -> dict:
        return obj["result"]


class OpenAIFunctionCallIn(StrictSerializer):
    name = StrictCharField(max_length=200)
    arguments = StrictCharField(
        allow_blank=True, trim_whitespace=False, help_text="JSON text, as the model wrote it"
    )

    def to_internal_value(self, data):
        if isinstance(data, dict) and "arguments" in data and not isinstance(data["arguments"], str):
            raise serializers.ValidationError({"arguments": ["must be the JSON text the model wrote"]})
        return super().to_internal_value(data)


class OpenAIToolCallIn(StrictSerializer):
    """`message.tool_calls[i].model_dump()` of the openai SDK."""

    id = StrictCharField(max_length=200)
    type = StrictChoiceField(choices=["function"])
    function = OpenAIFunctionCallIn()


class AnthropicToolUseIn(StrictSerializer):
    """A `tool_use` content block (`block.model_dump()`) of the anthropic SDK."""

    id = StrictCharField(max_length=200)
    type = StrictChoiceField(choices=["tool_use"])
    name = StrictCharField(max_length=200)
    input = StrictDictField()
    caller = StrictDictField(required=False, allow_null=True, help_text="ignored")
    toolset_name = StrictCharField(required=False, allow_null=True, allow_blank=True, help_text="ignored")


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="ToolCall",
        serializers=[OpenAIToolCallIn, AnthropicToolUseIn],
        resource_type_field_name=None,
    )
)
class ToolCallField(StrictDictField):
    """The SDK's tool call as a JSON object; the view checks it against the shape `format` names."""


class FormatIsNotARenderer(DefaultContentNegotiation):
    """`?format=` names the SDK's shape here, not DRF's renderer (which would 404 on "openai")."""

    settings = SimpleNamespace(URL_FORMAT_OVERRIDE=None)  # type: ignore[assignment]  # the one setting it reads


class ToolsApi(AppAPIView):
    content_negotiation_class = FormatIsNotARenderer

    class QuerySerializer(StrictQuerySerializer):
        format = StrictChoiceField(choices=FORMATS, required=False, default="openai")

    @extend_schema(
        parameters=[QuerySerializer],
        responses={200: ToolListOut},
        summary="The memory tools, as the OpenAI or Anthropic SDK takes them",
    )
    def get(self, request):
        params = self.validated(self.QuerySerializer, request.query_params)
        return Response({"format": params["format"], "tools": definitions(params["format"])})


class ToolCallApi(AppAPIView):
    class InputSerializer(StrictSerializer):
        conversation = StrictIntegerField(
            min_value=1, help_text="The call runs in its subject, scope and working_dir"
        )
        format = StrictChoiceField(choices=FORMATS)
        call = ToolCallField(
            help_text="The SDK's tool call: OpenAI `tool_calls[i]` ({id, type: function, function: "
            "{name, arguments}}), Anthropic a `tool_use` block ({id, type: tool_use, name, input})."
        )

        # the shape of `call` is the one `format` names ("not the other": the enum hook would
        # turn a one-value enum into a reference to the whole FormatEnum)
        schema_rules = {
            "oneOf": [
                {
                    "properties": {
                        "format": {"not": {"enum": [other]}},
                        "call": {"$ref": f"#/components/schemas/{component}Request"},
                    }
                }
                for other, component in (("anthropic", "OpenAIToolCallIn"), ("openai", "AnthropicToolUseIn"))
            ]
        }

    @extend_schema(
        request=InputSerializer,
        responses={200: ToolCallOut},
        summary="Run one tool call of a model (errors come back as the tool's result)",
    )
    def post(self, request):
        data = self.validated(self.InputSerializer, request.data)
        shape = OpenAIToolCallIn if data["format"] == "openai" else AnthropicToolUseIn
        try:
            call = self.validated(shape, data["call"])
        except serializers.ValidationError as exc:
            raise serializers.ValidationError({"call": exc.detail}) from exc
        conversation = self.conversation(data["conversation"])
        if data["format"] == "openai":
            name, arguments = call["function"]["name"], call["function"]["arguments"]
        else:
            name, arguments = call["name"], call["input"]
        context = ToolContext(
            app=self.app, subject=conversation.subject, actor=self.actor, conversation=conversation
        )
        outcome = tool_execute(name=name, arguments=arguments, context=context)
        return Response(
            {
                "tool": outcome.tool,
                "ok": outcome.ok,
                "result": tool_result_message(outcome, format=data["format"], call_id=call["id"]),
                "output": outcome.payload(),
                "error": outcome.error,
            }
        )
