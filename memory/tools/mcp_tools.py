"""The MCP server's own tools (get_context, add_memory, search_memories, list_memories,
delete_memory), registered for MCP only; the memory.* tools are served beside them."""
