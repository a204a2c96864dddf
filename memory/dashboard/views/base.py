"""Access helpers and rendering shared by every dashboard page.

Access: a person sees only the subjects they own (`Subject.owner`);
staff see every subject. Every view that takes a `subject_id` goes through `subject_view`,
which answers 404 — never 403 — for a subject that is not the user's, so ids of other
people's memory cannot be probed. Items inside a subject are looked up with `owned_or_404`,
which filters by that subject, so an id from another subject is a 404 too.

Adding a page:

    @subject_view                      # login required + ownership; passes `subject`
    @require_GET
    def lessons(request, subject):
        ...
        return render_page(request, subject, "dashboard/lessons.html", {...}, page="lessons")

    @subject_view
    @require_POST                      # every state change is a POST (CSRF via hx-headers)
    def lesson_vote(request, subject, lesson_id):
        lesson = owned_or_404(Lesson, subject, lesson_id)
        ...
        return render_fragment(request, "dashboard/partials/lessons_vote.html", {...})
"""

from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from functools import wraps
from typing import TypeVar

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string

from memory.config import MemoryConfig, get_config
from memory.models import PendingMemory, PendingStatus, Subject
from memory.modes import mode_names
from memory.services.audit import Actor
from memoryweb.errors import MemorywebError


def subjects_for(user) -> QuerySet[Subject]:
    """The subjects `user` may see and edit: all of them for staff, their own otherwise."""
    queryset = Subject.objects.select_related("app").order_by("app__name", "external_id")
    if not user.is_authenticated:
        return queryset.none()
    if user.is_staff:
        return queryset
    return queryset.filter(owner=user)


def subject_for(request: HttpRequest, subject_id: int) -> Subject:
    """The subject with this id if the user may see it; 404 otherwise (also for staff typos)."""
    return get_object_or_404(subjects_for(request.user), pk=subject_id)


M = TypeVar("M", bound=Model)


def owned_or_404(model: type[M], subject: Subject, pk, **lookups) -> M:
    """An item of `model` that belongs to `subject` (its `subject` field), or 404.

    For models that reach the subject through a relation, pass the lookup yourself, e.g.
    `get_object_or_404(NoteLink, src__subject=subject, pk=link_id)`.
    """
    return get_object_or_404(model, subject=subject, pk=pk, **lookups)


def subject_view(view: Callable) -> Callable:
    """Decorate a view taking `subject_id`: login required, the subject checked (404 if not
    the user's), and the view called as `view(request, subject, **other_kwargs)`."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, subject_id: int, *args, **kwargs) -> HttpResponse:
        subject = subject_for(request, subject_id)
        return view(request, subject, *args, **kwargs)

    return wrapper


def is_htmx(request: HttpRequest) -> bool:
    """Whether htmx sent this request (it then wants a fragment, not a page).

    A history restore (the back button on a URL htmx pushed) wants the whole page.
    """
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


def dashboard_actor(request: HttpRequest) -> Actor:
    """The audit actor for a dashboard edit: the logged-in user."""
    return Actor.user(request.user)


def subject_config(subject: Subject) -> MemoryConfig:
    """The memory configuration the subject's app runs with (services need it)."""
    return get_config(subject.app)


def pending_count(subject: Subject) -> int:
    return PendingMemory.objects.filter(subject=subject, status=PendingStatus.PENDING).count()


def page_context(request: HttpRequest, subject: Subject | None, page: str) -> dict:
    """What base.html needs: the subject, the switcher's list and the active nav entry."""
    return {
        "subject": subject,
        "switch_subjects": list(subjects_for(request.user)[:500]),
        "page": page,
        "pending_count": pending_count(subject) if subject else 0,
    }


def page_mode(request: HttpRequest) -> str:
    """The assistant mode a page is looked at in: its `?mode=` when that names a known mode
    (e.g. a link from a context preview built in that mode), else "". The vote buttons send it
    along, so the vote is recorded in that mode (docs/feedback.md)."""
    name = request.GET.get("mode", "")
    return name if name in mode_names() else ""


def render_page(
    request: HttpRequest,
    subject: Subject | None,
    template: str,
    context: dict | None = None,
    *,
    page: str,
    status: int = 200,
) -> HttpResponse:
    """Render a full page that extends base.html. `page` is the nav entry to highlight (the
    URL name without namespace, e.g. "notes")."""
    full = page_context(request, subject, page)
    full["vote_mode"] = page_mode(request)
    full.update(context or {})
    return HttpResponse(render_to_string(template, full, request=request), status=status)


def render_fragment(
    request: HttpRequest, template: str, context: dict | None = None, *, status: int = 200
) -> HttpResponse:
    """Render an htmx fragment, plus any queued messages as out-of-band toasts."""
    html = render_to_string(template, {"vote_mode": page_mode(request), **(context or {})}, request=request)
    html += render_to_string("dashboard/partials/toasts_oob.html", {}, request=request)
    return HttpResponse(html, status=status)


def add_service_error(form: forms.Form, error: MemorywebError) -> None:
    """Put a service's validation error on the form field it names (or on the form)."""
    field = error.field if error.field in form.fields else None
    form.add_error(field, error.message)


def report_edit(request: HttpRequest, *, before: int, after: int) -> None:
    """Tell the person what an edit did: a new version (the old ones stay), or nothing."""
    if after != before:
        messages.success(request, f"Saved version {after}. Earlier versions stay readable.")
    else:
        messages.info(request, "Nothing changed.")


def split_list(text: str) -> list[str]:
    """Comma-separated input ("a, b,c") → ["a", "b", "c"], blanks dropped."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


class DateRangeForm(forms.Form):
    """`since` and `until` (YYYY-MM-DD, UTC, both days included) for a page's filters: the audit
    trail's and the access log's forms add their own fields."""

    since = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    until = forms.DateField(required=False, input_formats=["%Y-%m-%d"])

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            self.add_error("until", "until is before since")
        return data


def created_between(queryset, filters: dict):
    """`queryset` kept to rows created from `since` to `until` (DateRangeForm's cleaned data)."""
    if filters.get("since"):
        queryset = queryset.filter(created_at__gte=_day_start(filters["since"]))
    if filters.get("until"):
        queryset = queryset.filter(created_at__lt=_day_start(filters["until"] + timedelta(days=1)))
    return queryset


def _day_start(day) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)
