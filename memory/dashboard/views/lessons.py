"""Lessons and procedures: list (search, live or parked), vote, edit (a new version), park,
delete; bulk actions on the selected ones (park, unpark, vote, delete).

Both are distilled by consolidation and curated by the person; their writes go through
memory/services/lessons.py, the parking service and the votes service, like the API's.
Procedure steps are advice text: shown and edited here, never executed.
"""

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.db import transaction
from django.db.models import Model, prefetch_related_objects
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory.dashboard.writers import writer_origins
from memory.models import ItemKind, Lesson, Origin, Procedure
from memory.search.lexical import lesson_search, procedure_search
from memory.selectors import distilled_browse
from memory.services.lessons import (
    MAX_LESSON_CHARS,
    lesson_delete,
    lesson_edit,
    procedure_delete,
    procedure_edit,
)
from memory.services.parking import item_park
from memoryweb.errors import MemorywebError

from .base import (
    add_service_error,
    dashboard_actor,
    is_htmx,
    owned_or_404,
    render_fragment,
    render_page,
    report_edit,
    subject_view,
)
from .notes import BulkForm, bulk_selection, bulk_vote, vote_mode, vote_submit
from .profile import ParkForm

PAGE_SIZE = 20


class DistilledSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, label="Search")
    app = forms.CharField(required=False, max_length=100, help_text="The app that wrote them.")
    parked = forms.ChoiceField(
        required=False,
        choices=[("live", "Live"), ("parked", "Parked (kept, never in a context)"), ("all", "All")],
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=10_000)


class DistilledBulkForm(BulkForm):
    """Bulk actions on lessons or procedures: no tags to change (their edits are the text)."""

    action = forms.ChoiceField(
        choices=[
            ("park", "Park"),
            ("unpark", "Unpark"),
            ("up", "Vote up"),
            ("down", "Vote down"),
            ("delete", "Delete"),
        ]
    )


class LessonEditForm(forms.Form):
    text = forms.CharField(
        max_length=MAX_LESSON_CHARS,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="One to three sentences: the principle in plain words.",
    )


STEP_NUMBER = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")


class ProcedureEditForm(forms.Form):
    title = forms.CharField(max_length=200)
    steps = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="One step per line, 2 to 8 steps. They are advice to read; nothing runs them.",
    )

    def clean_steps(self) -> list[str]:
        lines = (STEP_NUMBER.sub("", line).strip() for line in self.cleaned_data["steps"].splitlines())
        return [line for line in lines if line]


@dataclass(frozen=True)
class Distilled:
    """What differs between the lessons page and the procedures page."""

    page: str  # URL name of the list, and the nav entry
    singular: str  # "lesson": URL names are f"{singular}_edit", …
    model: type[Model]
    search: object
    item_kind: str
    title: str

    @property
    def ref_prefix(self) -> str:
        """How the context names one: "l" (l:4) or "p" (p:5)."""
        return self.singular[0]

    # URL names for the templates ({% url kind.edit_name subject_id=… item_id=… %})
    @property
    def list_name(self) -> str:
        return f"dashboard:{self.page}"

    @property
    def card_name(self) -> str:
        return f"dashboard:{self.singular}_card"

    @property
    def edit_name(self) -> str:
        return f"dashboard:{self.singular}_edit"

    @property
    def vote_name(self) -> str:
        return f"dashboard:{self.singular}_vote"

    @property
    def delete_name(self) -> str:
        return f"dashboard:{self.singular}_delete"

    @property
    def park_name(self) -> str:
        return f"dashboard:{self.singular}_park"

    @property
    def bulk_name(self) -> str:
        return f"dashboard:{self.page}_bulk"

    @property
    def card_template(self) -> str:
        return f"dashboard/partials/{self.page}_card.html"

    @property
    def edit_template(self) -> str:
        return f"dashboard/partials/{self.page}_edit.html"

    def list_url(self, subject, item=None) -> str:
        url = reverse(f"dashboard:{self.page}", args=[subject.pk])
        return f"{url}#{self.singular}-{item.pk}" if item is not None else url


LESSONS = Distilled("lessons", "lesson", Lesson, lesson_search, ItemKind.LESSON, "Lessons")
PROCEDURES = Distilled(
    "procedures", "procedure", Procedure, procedure_search, ItemKind.PROCEDURE, "Procedures"
)


def _prefetch(kind: Distilled, items: list) -> None:
    if kind is LESSONS:
        prefetch_related_objects(items, "versions", "consolidated_notes", "procedures")
    else:
        prefetch_related_objects(items, "versions", "lesson")


def _card_context(kind: Distilled, subject, item, **extra) -> dict:
    _prefetch(kind, [item])
    return {"subject": subject, "kind": kind, "item": item, **extra}


def _edit_form(kind: Distilled, item, data=None) -> forms.Form:
    if kind is LESSONS:
        return LessonEditForm(data, initial={"text": item.text})
    return ProcedureEditForm(data, initial={"title": item.title, "steps": "\n".join(item.steps)})


def _results_context(subject, kind: Distilled, form: DistilledSearchForm) -> dict:
    """The list for the search and filters of `form` (an invalid form: its errors, no list)."""
    context: dict = {"subject": subject, "kind": kind, "form": form, "results": []}
    if not form.is_valid():
        return context
    query = form.cleaned_data["q"].strip()
    parked = form.cleaned_data["parked"] or "live"
    page = form.cleaned_data["page"] or 1
    results, total = distilled_browse(
        model=kind.model,
        search=kind.search,
        subject=subject,
        query=query,
        origins=writer_origins(subject, form.cleaned_data["app"]),
        parked=parked,
        limit=PAGE_SIZE,
        offset=(page - 1) * PAGE_SIZE,
    )
    _prefetch(kind, [item for item, _ in results])
    params = {
        k: v
        for k, v in (("q", query), ("app", form.cleaned_data["app"]), ("parked", form.cleaned_data["parked"]))
        if v and not (k == "parked" and v == "live")
    }
    context.update(
        results=results,
        total=total,
        searching=bool(query),
        filtered=parked != "live",
        parked_filter=parked,
        page_number=page,
        has_previous=page > 1,
        has_next=page * PAGE_SIZE < total,
        previous_query=urlencode({**params, "page": page - 1}),
        next_query=urlencode({**params, "page": page + 1}),
    )
    return context


def _list(request: HttpRequest, subject, kind: Distilled, *, form=None, bulk_confirm=None, status=None):
    """The page, or (for htmx) just the results for the current search."""
    form = form if form is not None else DistilledSearchForm(request.GET)
    context = _results_context(subject, kind, form)
    context["bulk_confirm"] = bulk_confirm
    if status is None:
        status = 200 if form.is_valid() else 400
    if is_htmx(request):
        return render_fragment(request, "dashboard/partials/lessons_results.html", context, status=status)
    template = f"dashboard/{kind.page}.html"
    return render_page(request, subject, template, context, page=kind.page, status=status)


def _card(request: HttpRequest, subject, kind: Distilled, item_id: int) -> HttpResponse:
    item: Any = owned_or_404(kind.model, subject, item_id)  # a Lesson or a Procedure
    if not is_htmx(request):
        return redirect(kind.list_url(subject, item))
    return render_fragment(request, kind.card_template, _card_context(kind, subject, item))


def _edit(request: HttpRequest, subject, kind: Distilled, item_id: int) -> HttpResponse:
    """GET: the editor. POST: a new version; earlier versions stay readable."""
    item: Any = owned_or_404(kind.model, subject, item_id)  # a Lesson or a Procedure
    edit_template = kind.edit_template
    if request.method == "GET":
        context = _card_context(kind, subject, item, edit_form=_edit_form(kind, item))
        if is_htmx(request):
            return render_fragment(request, edit_template, context)
        return render_page(request, subject, "dashboard/lessons_edit.html", context, page=kind.page)

    form = _edit_form(kind, item, request.POST)
    if form.is_valid():
        before = item.version
        try:
            if kind is LESSONS:
                item = lesson_edit(
                    lesson=item,
                    text=form.cleaned_data["text"],
                    actor=dashboard_actor(request),
                    origin=Origin.DASHBOARD,
                )
            else:
                item = procedure_edit(
                    procedure=item,
                    title=form.cleaned_data["title"],
                    steps=form.cleaned_data["steps"],
                    actor=dashboard_actor(request),
                    origin=Origin.DASHBOARD,
                )
        except MemorywebError as error:
            add_service_error(form, error)
        else:
            report_edit(request, before=before, after=item.version)
            if not is_htmx(request):
                return redirect(kind.list_url(subject, item))
            context = _card_context(kind, subject, item)
            return render_fragment(request, kind.card_template, context)
    item.refresh_from_db()  # a refused edit leaves the item as it was
    context = _card_context(kind, subject, item, edit_form=form)
    if is_htmx(request):
        return render_fragment(request, edit_template, context, status=400)
    return render_page(request, subject, "dashboard/lessons_edit.html", context, page=kind.page, status=400)


def _vote(request: HttpRequest, subject, kind: Distilled, item_id: int) -> HttpResponse:
    """Vote up or down (votes service); answers the updated vote widget."""
    item: Any = owned_or_404(kind.model, subject, item_id)  # a Lesson or a Procedure
    form, status = vote_submit(request, subject, item=item, item_kind=kind.item_kind)
    if not is_htmx(request):
        return redirect(kind.list_url(subject, item))
    context = {
        "subject": subject,
        "kind": kind,
        "item": item,
        "vote_form": form,
        "vote_mode": vote_mode(form),
    }
    return render_fragment(request, "dashboard/partials/lessons_vote.html", context, status=status)


def _park(request: HttpRequest, subject, kind: Distilled, item_id: int) -> HttpResponse:
    """Park the lesson or procedure (kept here, never in a context, search, recall or tool) or
    unpark it; answers its card again."""
    item: Any = owned_or_404(kind.model, subject, item_id)  # a Lesson or a Procedure
    form = ParkForm(request.POST)
    status = 200
    if not form.is_valid():
        messages.error(request, "Choose park or unpark.")
        status = 400
    else:
        parked = form.cleaned_data["parked"]
        item_park(item=item, parked=parked, actor=dashboard_actor(request))
        name = f"{kind.singular} {kind.ref_prefix}:{item.pk}"
        if parked:
            messages.success(request, f"Parked {name}: kept, and out of every context until you unpark it.")
        else:
            messages.success(request, f"Unparked {name}: it is back in the context.")
    if not is_htmx(request):
        return redirect(kind.list_url(subject, item))
    return render_fragment(request, kind.card_template, _card_context(kind, subject, item), status=status)


BULK_DONE = {
    "park": "Parked",
    "unpark": "Unparked",
    "up": "Voted up",
    "down": "Voted down",
    "delete": "Deleted",
}


def _bulk_apply(request: HttpRequest, subject, kind: Distilled, action: str, items: list) -> int:
    """Apply one bulk action to the items (all of the subject); returns how many changed."""
    actor = dashboard_actor(request)
    changed = 0
    for item in items:
        if action in ("park", "unpark"):
            changed += item_park(item=item, parked=action == "park", actor=actor)
        elif action in ("up", "down"):
            changed += bulk_vote(
                request, subject, item_kind=kind.item_kind, item_id=item.pk, up=action == "up"
            )
        else:
            if kind is LESSONS:
                lesson_delete(lesson=item, actor=actor)
            else:
                procedure_delete(procedure=item, actor=actor)
            changed += 1
    return changed


def _bulk(request: HttpRequest, subject, kind: Distilled) -> HttpResponse:
    """One action on the selected lessons or procedures (`ids`): park, unpark, vote up or down
    (the person's one vote), or delete — which asks first (`confirmed`, with the `count` it
    named). Every id must be one of the subject's, else 404 and nothing changes; all or
    nothing. Answers the list again (htmx, with the search and filters of the page) or goes
    back to it."""
    form = DistilledBulkForm(request.POST, noun=kind.singular)
    search = DistilledSearchForm(request.POST)
    status, confirm = 200, None
    owned = kind.model._default_manager.filter(subject=subject)
    selected = bulk_selection(request, form, owned, noun=kind.singular, asks="delete")
    if selected is None:
        status = 400
    else:
        action, items, confirm = selected
        if confirm is None:
            try:
                with transaction.atomic():
                    changed = _bulk_apply(request, subject, kind, action, items)
            except MemorywebError as error:  # voting switched off for the app
                status = 400
                messages.error(request, f"Nothing changed: {error.message}")
            else:
                label = kind.singular if changed == 1 else kind.page
                messages.success(request, f"{BULK_DONE[action]} {changed} {label}.")
    if not is_htmx(request) and status == 200 and confirm is None:
        return redirect(kind.list_url(subject))
    return _list(request, subject, kind, form=search, bulk_confirm=confirm, status=status)


def _delete(request: HttpRequest, subject, kind: Distilled, item_id: int) -> HttpResponse:
    item: Any = owned_or_404(kind.model, subject, item_id)  # a Lesson or a Procedure
    if kind is LESSONS:
        lesson_delete(lesson=item, actor=dashboard_actor(request))
        messages.success(
            request, f"Deleted lesson {item_id}. The notes it came from stay archived and readable."
        )
    else:
        procedure_delete(procedure=item, actor=dashboard_actor(request))
        messages.success(request, f"Deleted procedure {item_id}.")
    if is_htmx(request):
        return render_fragment(request, "dashboard/partials/lessons_removed.html")
    return redirect(kind.list_url(subject))


@subject_view
@require_GET
def lessons(request, subject):
    return _list(request, subject, LESSONS)


@subject_view
@require_GET
def lesson_card(request, subject, item_id: int):
    return _card(request, subject, LESSONS, item_id)


@subject_view
@require_http_methods(["GET", "POST"])
def lesson_edit_view(request, subject, item_id: int):
    return _edit(request, subject, LESSONS, item_id)


@subject_view
@require_POST
def lesson_vote(request, subject, item_id: int):
    return _vote(request, subject, LESSONS, item_id)


@subject_view
@require_POST
def lesson_park(request, subject, item_id: int):
    return _park(request, subject, LESSONS, item_id)


@subject_view
@require_POST
def lessons_bulk(request, subject):
    return _bulk(request, subject, LESSONS)


@subject_view
@require_POST
def lesson_delete_view(request, subject, item_id: int):
    return _delete(request, subject, LESSONS, item_id)


@subject_view
@require_GET
def procedures(request, subject):
    return _list(request, subject, PROCEDURES)


@subject_view
@require_GET
def procedure_card(request, subject, item_id: int):
    return _card(request, subject, PROCEDURES, item_id)


@subject_view
@require_http_methods(["GET", "POST"])
def procedure_edit_view(request, subject, item_id: int):
    return _edit(request, subject, PROCEDURES, item_id)


@subject_view
@require_POST
def procedure_vote(request, subject, item_id: int):
    return _vote(request, subject, PROCEDURES, item_id)


@subject_view
@require_POST
def procedure_park(request, subject, item_id: int):
    return _park(request, subject, PROCEDURES, item_id)


@subject_view
@require_POST
def procedures_bulk(request, subject):
    return _bulk(request, subject, PROCEDURES)


@subject_view
@require_POST
def procedure_delete_view(request, subject, item_id: int):
    return _delete(request, subject, PROCEDURES, item_id)


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "lessons/", lessons, name="lessons"),
    path(S + "lessons/bulk/", lessons_bulk, name="lessons_bulk"),
    path(S + "lessons/<int:item_id>/", lesson_card, name="lesson_card"),
    path(S + "lessons/<int:item_id>/edit/", lesson_edit_view, name="lesson_edit"),
    path(S + "lessons/<int:item_id>/vote/", lesson_vote, name="lesson_vote"),
    path(S + "lessons/<int:item_id>/park/", lesson_park, name="lesson_park"),
    path(S + "lessons/<int:item_id>/delete/", lesson_delete_view, name="lesson_delete"),
    path(S + "procedures/", procedures, name="procedures"),
    path(S + "procedures/bulk/", procedures_bulk, name="procedures_bulk"),
    path(S + "procedures/<int:item_id>/", procedure_card, name="procedure_card"),
    path(S + "procedures/<int:item_id>/edit/", procedure_edit_view, name="procedure_edit"),
    path(S + "procedures/<int:item_id>/vote/", procedure_vote, name="procedure_vote"),
    path(S + "procedures/<int:item_id>/park/", procedure_park, name="procedure_park"),
    path(S + "procedures/<int:item_id>/delete/", procedure_delete_view, name="procedure_delete"),
]
