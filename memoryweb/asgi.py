import os

import django
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
django.setup(set_prefix=False)  # what get_asgi_application() does before building its handler

# Every request runs in a worker thread of its own, and Django never reuses a persistent
# connection across those: with CONN_MAX_AGE > 0 each request's connection stayed open until
# garbage collection (four web processes under load held 94 PostgreSQL connections). The web
# process closes each at the end of its request; Celery workers keep DATABASE_CONN_MAX_AGE.
for database in settings.DATABASES.values():
    database["CONN_MAX_AGE"] = 0


class SyncChainASGIHandler(ASGIHandler):
    """Django's ASGI handler, with the middleware chain and the view run in one worker thread.

    Every view and every middleware of memoryweb is synchronous. Django's stock ASGI handler
    still builds an async chain: each middleware's process_request, process_view and
    process_response, and then the view, go to a worker thread through a sync_to_async hop of
    their own, about fifteen per request, which cost about a third of the CPU time of a small
    request (docs/benchmarks.md, Load). Here the request crosses into its worker thread once
    and runs the synchronous chain, the very path WSGI and Django's test client run; the body
    is still read and the response still sent on the event loop, and each request still gets
    its own thread (ThreadSensitiveContext), so a slow request does not hold up the others.
    """

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


django_asgi_app = SyncChainASGIHandler()

from memoryweb.mcp.http import PATHS as MCP_PATHS  # noqa: E402
from memoryweb.mcp.http import McpApp  # noqa: E402
from memoryweb.routing import websocket_urlpatterns  # noqa: E402  (needs the apps loaded above)


class McpMount:
    """/mcp is the MCP server over streamable HTTP (memoryweb/mcp/http.py); the rest is Django."""

    def __init__(self, app, mcp_app):
        self.app = app
        self.mcp_app = mcp_app

    async def __call__(self, scope, receive, send):
        if scope.get("path") in MCP_PATHS:
            return await self.mcp_app(scope, receive, send)
        return await self.app(scope, receive, send)


# The embedded default has no separate web server for static files (admin CSS, API docs
# assets); a production deployment may serve STATIC_ROOT from its proxy instead.
# Websockets (live updates, the playground) use the dashboard session; a socket opened from
# another site is refused by the origin check, which is CSRF's counterpart for websockets.
application = ProtocolTypeRouter(
    {
        "http": McpMount(ASGIStaticFilesHandler(django_asgi_app), McpApp()),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
