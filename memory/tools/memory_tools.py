"""The memory.* tools a model calls: profile facts, notes, lessons, procedures (and memory://
reads). Each returns what the matching REST endpoint returns, through the same serializers."""

from memory.api.views import FactOut
from memory.selectors import fact_list
from memory.tools.registry import Tool, ToolContext, register


def _profile_list(context: ToolContext, arguments: dict) -> dict:
    return {"facts": FactOut(fact_list(subject=context.subject), many=True).data}


register(
    Tool(
        name="memory.profile.list",
        description="List the facts held about the user (their profile): key, value, since when.",
        input_schema={"properties": {}},
        run=_profile_list,
    )
)
