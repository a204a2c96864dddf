"""The audit trail for staff: every AuditEvent (who changed or deleted what, from where),
filtered by subject, actor, action and date range, a page at a time, and exported as CSV or
JSON Lines with the same filters. Anyone else gets 404, like any page that is not theirs.

Filters (query string, all optional):
- `subject`: a subject's id, or its external id (in any app);
- `actor`: `kind:id` (`user:alice`, `api_key:1a2b3c4d`, `task:reflect`) or just the id;
- `action`: an action or its prefix (`api_key.` matches every key event);
- `since`, `until`: dates (YYYY-MM-DD, UTC), both days included.
"""

import csv
import json
from collections.abc import Callable, Iterator
from functools import wraps

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import path
from django.utils import timezone
from django.views.decorators.http import require_GET

from memory.models import AuditEvent
from memory.services.audit import audit_record

from .base import DateRangeForm, created_between, dashboard_actor, render_page

PAGE_SIZE = 50
EXPORT_FIELDS = [
    "id",
    "created_at",
    "app",
    "subject_id",
    "subject",
    "actor_kind",
    "actor_id",
    "action",
    "object_kind",
    "object_id",
    "data",
]


def staff_view(view: Callable) -> Callable:
    """Login required, and staff only: 404 for everyone else (the page is not theirs to know)."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_staff:
            raise Http404("no such page")
        return view(request, *args, **kwargs)

    return wrapper


class AuditFilterForm(DateRangeForm):
    subject = forms.CharField(required=False, max_length=200)
    actor = forms.CharField(required=False, max_length=220)
    action = forms.CharField(required=False, max_length=60)
    field_order = ["subject", "actor", "action", "since", "until"]


def audit_filtered(filters: dict) -> QuerySet[AuditEvent]:
    """AuditEvents matching the cleaned filters of AuditFilterForm, newest first."""
    events = AuditEvent.objects.select_related("app", "subject").order_by("-created_at", "-id")
    subject = (filters.get("subject") or "").strip()
    if subject:
        events = (
            events.filter(subject_id=int(subject))
            if subject.isdigit()
            else events.filter(subject__external_id=subject)
        )
    actor = (filters.get("actor") or "").strip()
    if actor:
        kind, sep, actor_id = actor.partition(":")
        events = events.filter(actor_kind=kind, actor_id=actor_id) if sep else events.filter(actor_id=actor)
    action = (filters.get("action") or "").strip()
    if action:
        events = events.filter(action__startswith=action)
    return created_between(events, filters)


def _row(event: AuditEvent) -> dict:
    return {
        "id": event.pk,
        "created_at": event.created_at.isoformat(),
        "app": event.app.name if event.app else "",
        "subject_id": event.subject_id,
        "subject": event.subject.external_id if event.subject else "",
        "actor_kind": event.actor_kind,
        "actor_id": event.actor_id,
        "action": event.action,
        "object_kind": event.object_kind,
        "object_id": event.object_id,
        "data": event.data,
    }


@staff_view
@require_GET
def audit(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    if not form.is_valid():
        context: dict[str, object] = {"form": form, "page_obj": None, "query": ""}
        return render_page(request, None, "dashboard/audit.html", context, page="audit", status=400)
    page_obj = Paginator(audit_filtered(form.cleaned_data), PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page_obj": page_obj, "query": query.urlencode()}
    return render_page(request, None, "dashboard/audit.html", context, page="audit")


class _Echo:
    def write(self, value):
        return value


def _csv_lines(events: QuerySet[AuditEvent]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(EXPORT_FIELDS)
    for event in events.iterator(chunk_size=2000):
        row = _row(event)
        row["data"] = json.dumps(row["data"], ensure_ascii=False, sort_keys=True)
        yield writer.writerow([row[name] for name in EXPORT_FIELDS])


def _jsonl_lines(events: QuerySet[AuditEvent]) -> Iterator[str]:
    for event in events.iterator(chunk_size=2000):
        yield json.dumps(_row(event), ensure_ascii=False) + "\n"


EXPORTS = {
    "csv": ("text/csv; charset=utf-8", _csv_lines),
    "jsonl": ("application/x-ndjson; charset=utf-8", _jsonl_lines),
}


@staff_view
@require_GET
def audit_export(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    """The filtered trail as a download, streamed. Exporting it is itself audited."""
    if fmt not in EXPORTS:
        raise Http404("export as csv or jsonl")
    form = AuditFilterForm(request.GET)
    if not form.is_valid():
        fields = {name: " ".join(str(e) for e in errors) for name, errors in form.errors.items()}
        return HttpResponse(
            json.dumps({"error": {"code": "invalid", "fields": fields}}),
            status=400,
            content_type="application/json",
        )
    events = audit_filtered(form.cleaned_data)
    audit_record(
        actor=dashboard_actor(request),
        action="audit.exported",
        object_kind="audit",
        data={"format": fmt, **{k: str(v) for k, v in form.cleaned_data.items() if v}},
    )
    content_type, lines = EXPORTS[fmt]
    response = StreamingHttpResponse(lines(events), content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="memoryweb-audit-{stamp}.{fmt}"'
    response["Cache-Control"] = "no-store"
    return response


urlpatterns = [
    path("audit/", audit, name="audit"),
    path("audit/export.<str:fmt>", audit_export, name="audit_export"),
]
