"""`manage.py mcp`: the MCP server over stdio (for Claude Desktop, Cursor, …; docs/mcp.md)."""

import os

import anyio
from asgiref.sync import sync_to_async
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections
from mcp.server.stdio import stdio_server

from memoryweb.errors import MemorywebError
from memoryweb.mcp.server import McpSession, server_build, session_open


class Command(BaseCommand):
    help = (
        "Serve the MCP server over stdio. The API key comes from MEMORYWEB_API_KEY, the subject "
        "from MEMORYWEB_SUBJECT (or --subject), an optional conversation id (its scope applies) "
        "from MEMORYWEB_CONVERSATION."
    )

    def add_arguments(self, parser):
        parser.add_argument("--subject", default=None, help="the subject's external id (MEMORYWEB_SUBJECT)")
        parser.add_argument("--conversation", default=None, help="a conversation id of that subject")

    def handle(self, *args, **options):
        try:
            session = session_open(
                raw_key=os.environ.get("MEMORYWEB_API_KEY"),
                subject=options["subject"] or os.environ.get("MEMORYWEB_SUBJECT"),
                conversation=options["conversation"] or os.environ.get("MEMORYWEB_CONVERSATION"),
            )
        except MemorywebError as exc:
            what = {
                "api_key": "MEMORYWEB_API_KEY",
                "subject": "MEMORYWEB_SUBJECT",
                "conversation": "MEMORYWEB_CONVERSATION",
            }
            hint = f" (set {what[exc.field]})" if exc.field in what else ""
            raise CommandError(f"mcp: {exc.message}{hint}") from exc
        finally:
            close_old_connections()
        anyio.run(self._serve, session)

    @staticmethod
    async def _serve(session: McpSession) -> None:
        server = server_build(lambda ctx: session)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        await sync_to_async(close_old_connections)()
