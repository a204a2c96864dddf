"""Memory tools for models and MCP clients: one registry (`memory/tools/registry.py`), the
memory.* tools (`memory_tools.py`) and the MCP server's own (`mcp_tools.py`)."""

from memory.tools.registry import (
    FORMATS,
    MCP,
    MODEL,
    Tool,
    ToolContext,
    ToolOutcome,
    definitions,
    tool_execute,
    tool_find,
    tool_result_message,
    tools,
)

__all__ = [
    "FORMATS",
    "MCP",
    "MODEL",
    "Tool",
    "ToolContext",
    "ToolOutcome",
    "definitions",
    "tool_execute",
    "tool_find",
    "tool_result_message",
    "tools",
]
