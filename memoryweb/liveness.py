"""`GET /api/v1/live`: does this web process still reach its database?

No key needed, a tiny answer, and a real query: a web process whose database calls hang (say
two of its threads deadlocked inside SQLite) still accepts connections, so a probe that only
opened a socket would call it healthy. The query runs in a thread of its own on a connection
of its own and the request waits at most `LIVENESS_TIMEOUT` seconds for it; a query that does
not come back keeps its thread, and while it is stuck every probe answers 503 at once rather
than starting another. `manage.py runall` probes this and restarts a web process that stops
answering 200.
"""

import threading
import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

_lock = threading.Lock()
_stuck: threading.Thread | None = None  # a probe query that has not come back


def _query(result: dict) -> None:
    connection = connections[DEFAULT_DB_ALIAS]  # this thread's own connection
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM django_migrations")
            cursor.fetchone()
        result["ok"] = True
    except Exception as exc:  # any failure is the answer, not a crash of the probe
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        connection.close()


def probe_database(timeout: float) -> str | None:
    """Run one query on the default database within `timeout` seconds: None, or what went wrong."""
    global _stuck
    with _lock:
        if _stuck is not None and _stuck.is_alive():
            return f"an earlier probe query has not come back after more than {timeout:g}s"
        result: dict = {}
        thread = threading.Thread(target=_query, args=(result,), name="memoryweb-liveness", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            _stuck = thread
            return f"the database did not answer within {timeout:g}s"
        _stuck = None
        return None if result.get("ok") else f"the database query failed: {result.get('error')}"


_LIVE = inline_serializer(
    "Live",
    {
        "status": serializers.CharField(help_text='"ok"'),
        "database_ms": serializers.IntegerField(help_text="how long the query took"),
    },
)
_DOWN = inline_serializer(
    "LiveDown",
    {
        "error": inline_serializer(
            "LiveDownError",
            {
                "code": serializers.CharField(help_text='"unavailable"'),
                "message": serializers.CharField(),
            },
        )
    },
)


class LiveApi(APIView):
    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes: list = []

    @extend_schema(
        summary="Liveness: the process answers and its database answers a query",
        description=(
            "No key needed. 503 when the default database has not answered a query within "
            "`MEMORYWEB_LIVENESS_TIMEOUT` seconds (default 5)."
        ),
        auth=[],
        responses={200: _LIVE, 503: OpenApiResponse(_DOWN, description="the database did not answer")},
    )
    def get(self, request):
        started = time.monotonic()
        problem = probe_database(settings.LIVENESS_TIMEOUT)
        if problem is not None:
            return Response({"error": {"code": "unavailable", "message": problem}}, status=503)
        return Response({"status": "ok", "database_ms": round((time.monotonic() - started) * 1000)})
