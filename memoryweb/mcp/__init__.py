"""The MCP server (official `mcp` SDK): `manage.py mcp` over stdio and streamable HTTP at /mcp."""
