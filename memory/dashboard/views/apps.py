"""The person's control over the apps that use their memory (issue 16): the Apps page — which
app wrote and read what, with Pause/Resume of that app's access to this subject — and the
access log, every context build (RetrievalEvent) that chose an item of this memory.

A subject belongs to one App (`Subject.app`): that App's API calls write its facts, notes and
pending items (origins api, reflection, import) and read it through context builds; the
dashboard (the person) and memoryweb's own jobs (consolidation: lessons, procedures) write the
rest (memory/dashboard/writers.py names the writer of an item from its origin).
"""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Max
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from memory.dashboard.writers import APP_ORIGINS
from memory.models import (
    ItemKind,
    Lesson,
    Note,
    PendingMemory,
    Procedure,
    ProfileFact,
    RetrievalEvent,
    Subject,
    SubjectAppPause,
)
from memory.selectors import items_named, retrieval_events_naming
from memory.services.apps import subject_app_pause, subject_app_resume

from .base import DateRangeForm, created_between, dashboard_actor, render_page, subject_config, subject_view

PAGE_SIZE = 50


def _app_row(subject: Subject) -> dict:
    app = subject.app
    counts = {
        "facts": ProfileFact.objects.filter(subject=subject, origin__in=APP_ORIGINS).count(),
        "notes": Note.objects.filter(subject=subject, origin__in=APP_ORIGINS).count(),
        "lessons": Lesson.objects.filter(subject=subject, origin__in=APP_ORIGINS).count()
        + Procedure.objects.filter(subject=subject, origin__in=APP_ORIGINS).count(),
        "pending": PendingMemory.objects.filter(subject=subject).count(),
    }
    reads = RetrievalEvent.objects.filter(subject=subject)
    last_write = max(
        (
            stamp
            for stamp in (
                ProfileFact.objects.filter(subject=subject, origin__in=APP_ORIGINS).aggregate(
                    m=Max("created_at")
                )["m"],
                Note.objects.filter(subject=subject, origin__in=APP_ORIGINS).aggregate(m=Max("updated_at"))[
                    "m"
                ],
                PendingMemory.objects.filter(subject=subject).aggregate(m=Max("created_at"))["m"],
            )
            if stamp is not None
        ),
        default=None,
    )
    last_read = reads.aggregate(m=Max("created_at"))["m"]
    return {
        "app": app,
        "counts": counts,
        "written": sum(counts.values()),
        "reads": reads.count(),
        "last_read": last_read,
        "last_write": last_write,
        "last_access": max((s for s in (last_read, last_write) if s is not None), default=None),
        "pause": SubjectAppPause.objects.filter(subject=subject, app=app).select_related("paused_by").first(),
    }


@subject_view
@require_GET
def apps(request: HttpRequest, subject: Subject) -> HttpResponse:
    """The apps that touched this memory, with what they wrote and read, and Pause/Resume."""
    row = _app_row(subject)
    touched = [row] if row["written"] or row["reads"] or row["pause"] else []
    return render_page(request, subject, "dashboard/apps.html", {"rows": touched}, page="apps")


def _subject_app(subject: Subject, app_id: int):
    # a subject is reached by its own App only: any other id is not an app of this memory
    if app_id != subject.app_id:
        raise Http404("no such app for this subject")
    return subject.app


@subject_view
@require_POST
def app_pause(request: HttpRequest, subject: Subject, app_id: int) -> HttpResponse:
    app = _subject_app(subject, app_id)
    if subject_app_pause(subject=subject, app=app, user=request.user, actor=dashboard_actor(request)):
        messages.success(
            request, f"Paused {app.name}: it can neither read nor write this memory until you resume it."
        )
    else:
        messages.info(request, f"{app.name} was already paused.")
    return redirect("dashboard:apps", subject_id=subject.pk)


@subject_view
@require_POST
def app_resume(request: HttpRequest, subject: Subject, app_id: int) -> HttpResponse:
    app = _subject_app(subject, app_id)
    if subject_app_resume(subject=subject, app=app, actor=dashboard_actor(request)):
        messages.success(request, f"Resumed {app.name}: it reaches this memory again.")
    else:
        messages.info(request, f"{app.name} was not paused.")
    return redirect("dashboard:apps", subject_id=subject.pk)


class AccessFilterForm(DateRangeForm):
    app = forms.CharField(required=False, max_length=100)
    kind = forms.ChoiceField(
        required=False,
        choices=[("", "Any item"), *ItemKind.choices],
    )
    field_order = ["app", "kind", "since", "until"]


@subject_view
@require_GET
def access(request: HttpRequest, subject: Subject) -> HttpResponse:
    """The access log: every context build of this subject (who read, when, for which message,
    which items it chose), filtered by app, item kind and dates, newest first."""
    form = AccessFilterForm(request.GET)
    valid = form.is_valid()
    events = RetrievalEvent.objects.filter(subject=subject).select_related("conversation")
    if valid:
        data = form.cleaned_data
        if data["app"] and data["app"] != subject.app.name:
            events = events.none()
        if data["kind"]:
            events = retrieval_events_naming(events, f'"kind": "{data["kind"]}"')
        events = created_between(events, data)
    else:
        events = events.none()
    page_obj = Paginator(events.order_by("-created_at", "-id"), PAGE_SIZE).get_page(request.GET.get("page"))
    kind = form.cleaned_data.get("kind", "") if valid else ""
    chosen = [
        (event, [i for i in event.items if not kind or i.get("kind") == kind])
        for event in page_obj.object_list
    ]
    # each item by name (a fact's key and value, a note's first words), one query per kind a page
    names = items_named(subject_id=subject.pk, refs=[i.get("id") for _, items in chosen for i in items])
    rows = [
        {"event": event, "items": [{**i, "name": names.get(i.get("id"))} for i in items]}
        for event, items in chosen
    ]
    query = request.GET.copy()
    query.pop("page", None)
    return render_page(
        request,
        subject,
        "dashboard/access.html",
        {
            "form": form,
            "page_obj": page_obj,
            "rows": rows,
            "query": query.urlencode(),
            "retention_days": subject_config(subject)["retention.retrievalEventDays"],
        },
        page="access",
        status=200 if valid else 400,
    )


urlpatterns = [
    path("s/<int:subject_id>/apps/", apps, name="apps"),
    path("s/<int:subject_id>/apps/<int:app_id>/pause/", app_pause, name="app_pause"),
    path("s/<int:subject_id>/apps/<int:app_id>/resume/", app_resume, name="app_resume"),
    path("s/<int:subject_id>/access/", access, name="access"),
]
