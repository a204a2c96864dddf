"""Where text enters memoryweb: every text a request brings in is redacted here, once, before
any view, service, task, row or log line sees it (memory/redaction.py is the redactor).

- query-string values and form fields: `RedactionMiddleware` (settings' MIDDLEWARE), which
  also writes the request's access line (logger `memoryweb.access`) with the redacted query;
- JSON bodies of the REST API: `RedactingJSONParser` (DRF's DEFAULT_PARSER_CLASSES);
- websocket messages: `redact_inbound`, called by every consumer's `decode_json`
  (memory/dashboard/consumers.py, `JsonConsumer`).

Each removal is counted under `redaction.request`. The fields of Django's own login and
password forms are left alone: a password typed to sign in is checked and hashed, never
stored or logged, and redacting it would lock its owner out.
"""

import logging
import time

from django.http import QueryDict
from rest_framework.parsers import JSONParser

from memory.redaction import redact_data_counted
from memoryweb.counters import counter_add

access_log = logging.getLogger("memoryweb.access")

# the password fields of django.contrib.auth's forms (login, password change and reset, the
# admin's user forms) and the CSRF token: checked, never stored
UNREDACTED_FIELDS = frozenset(
    {"password", "password1", "password2", "old_password", "new_password1", "new_password2"}
    | {"csrfmiddlewaretoken"}
)
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def redact_inbound(data):
    """`data` (a decoded JSON value, a list of field pairs, a string) with every secret
    replaced by its placeholder; each removal is counted under `redaction.request`."""
    redacted, removed = redact_data_counted(data)
    if removed:
        counter_add("redaction.request", removed)
    return redacted


def _redacted_querydict(original: QueryDict, *, keep=frozenset()) -> QueryDict | None:
    """A redacted copy of `original` (fields in `keep` as they are), or None when it holds no
    secret."""
    out = QueryDict(mutable=True, encoding=original.encoding)
    removed = 0
    for key, values in original.lists():
        for value in values:
            if key not in keep:
                pair, found = redact_data_counted({key: value})
                value, removed = pair[key], removed + found
            out.appendlist(key, value)
    if not removed:
        return None
    counter_add("redaction.request", removed)
    out._mutable = False
    return out


class RedactionMiddleware:
    """Replaces `request.GET` (and the query string every URL is rebuilt from) and the form
    fields of `request.POST` with redacted copies, then logs the request's access line."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        query = _redacted_querydict(request.GET)
        if query is not None:
            request.GET = query
            request.META["QUERY_STRING"] = query.urlencode(safe=":/[]")
        if request.method == "POST" and request.content_type in FORM_TYPES:
            form = _redacted_querydict(request.POST, keep=UNREDACTED_FIELDS)
            if form is not None:
                request.POST = form
        response = self.get_response(request)
        access_log.info(
            '%s "%s %s" %s %s %.1fms',
            request.META.get("REMOTE_ADDR") or "-",
            request.method,
            request.get_full_path(),
            response.status_code,
            len(response.content) if not response.streaming else "-",
            (time.perf_counter() - started) * 1000,
        )
        return response


class RedactingJSONParser(JSONParser):
    """DRF's JSON parser, with every string of the parsed body redacted (and a value under a
    key that names a secret — "password", "api_key" — replaced whole)."""

    def parse(self, stream, media_type=None, parser_context=None):
        return redact_inbound(super().parse(stream, media_type, parser_context))
