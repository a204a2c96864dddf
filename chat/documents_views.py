"""The Documents page (dashboard, `/s/<subject_id>/documents/`): the session-summary artefacts
of a subject — MEMORY.md and memory_summary.md per scope, skills, mental models — one of them
rendered as Markdown, each with its version history and diffs, and the buttons that ask for a
run (chat.summaries.pipeline) or refresh mental models (chat.summaries.mental_models).

The page's body (`#documents-panel`) reloads itself from `documents_panel` on the
`mw:documents` event, which live.js fires for `documents.changed` and for a `job.finished` of
a summaries run, so a finished run shows its new versions without a reload. Buttons answer
the panel to htmx and redirect back to the page without JavaScript. `urlpatterns` joins the
dashboard namespace (memoryweb/urls.py).
"""

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_POST

from chat.summaries.pipeline import KIND, summaries_enabled, summaries_request
from memory.dashboard.markdown import markdown_html
from memory.dashboard.views.base import (
    dashboard_actor,
    is_htmx,
    render_fragment,
    render_page,
    subject_config,
    subject_view,
)
from memory.documents import MEMORY_MD, SUMMARY_MD, document_versions, documents_current, version_diff
from memory.models import DocumentKind, JobRun, JobStatus, MemoryDocument, Subject
from memory.tokens import estimate_tokens
from memoryweb.errors import MemorywebError

PANEL = "dashboard/partials/documents_panel.html"
SCOPE_PATHS = (MEMORY_MD, SUMMARY_MD)  # the order a scope's two documents are listed in


def _row(document: MemoryDocument) -> dict:
    version = document.current
    return {
        "document": document,
        "version": version,
        "url": document.url,
        "label": document.name or document.path,
        "tokens": estimate_tokens(version.content if version else ""),
    }


def documents_grouped(subject: Subject) -> dict:
    """The live documents as the page lists them: per scope (the whole memory first, then each
    project) its MEMORY.md and summary, then the skills, then the mental models."""
    scopes: dict[str, list[dict]] = {}
    skills, models = [], []
    for document in documents_current(subject=subject):
        if document.kind == DocumentKind.SKILL:
            skills.append(_row(document))
        elif document.kind == DocumentKind.MENTAL_MODEL:
            models.append(_row(document))
        else:
            scopes.setdefault(document.scope, []).append(_row(document))
    order = sorted(scopes, key=lambda scope: (scope != "", scope))
    return {
        "scopes": [
            {
                "scope": scope,
                "rows": sorted(scopes[scope], key=lambda row: SCOPE_PATHS.index(row["document"].path)),
            }
            for scope in order
        ],
        "skills": sorted(skills, key=lambda row: (row["document"].scope, row["document"].path)),
        "mental_models": sorted(models, key=lambda row: row["document"].path),
    }


def _all_rows(groups: dict) -> list[dict]:
    return (
        [row for group in groups["scopes"] for row in group["rows"]]
        + groups["skills"]
        + groups["mental_models"]
    )


def _selected(rows: list[dict], wanted: str | None) -> dict | None:
    """The row `?doc=` names (an id among this subject's live documents), else MEMORY.md of the
    whole memory, else the first one. An id of anything else falls back the same way, so a
    document pruned while the page is open does not break its live reload."""
    by_id = {str(row["document"].pk): row for row in rows}
    if wanted in by_id:
        return by_id[wanted]
    for row in rows:
        if row["document"].scope == "" and row["document"].path == MEMORY_MD:
            return row
    return rows[0] if rows else None


def documents_context(subject: Subject, doc: str | None) -> dict:
    """What the page and its panel show; `doc` is the id of the document to render."""
    groups = documents_grouped(subject)
    selected = _selected(_all_rows(groups), doc)
    runs = JobRun.objects.filter(subject=subject, kind=KIND)
    return {
        "subject": subject,
        "groups": groups,
        "selected": selected,
        "selected_html": markdown_html(selected["version"].content) if selected else "",
        "enabled": summaries_enabled(subject_config(subject)),
        "last_run": runs.exclude(status=JobStatus.QUEUED).order_by("-started_at", "-pk").first(),
        "queued": runs.filter(status=JobStatus.QUEUED).exists(),
    }


@subject_view
@require_GET
def documents(request: HttpRequest, subject) -> HttpResponse:
    return render_page(
        request,
        subject,
        "dashboard/documents.html",
        documents_context(subject, request.GET.get("doc")),
        page="documents",
    )


@subject_view
@require_GET
def documents_panel(request: HttpRequest, subject) -> HttpResponse:
    """The page's body alone (`#documents-panel`), for live refreshes and picking a document."""
    if not is_htmx(request):
        return redirect(_page_url(subject, request.GET.get("doc")))
    return render_fragment(request, PANEL, documents_context(subject, request.GET.get("doc")))


def _page_url(subject: Subject, doc: str | None = None) -> str:
    url = reverse("dashboard:documents", kwargs={"subject_id": subject.pk})
    return f"{url}?doc={doc}" if doc and doc.isdigit() else url


def _answer(request: HttpRequest, subject: Subject) -> HttpResponse:
    """After a button: the panel for htmx, the page again without JavaScript (the document
    that was shown stays shown: the form carries it as `doc`)."""
    doc = request.POST.get("doc")
    if not is_htmx(request):
        return redirect(_page_url(subject, doc))
    return render_fragment(request, PANEL, documents_context(subject, doc))


def _request_run(request: HttpRequest, subject: Subject, *, force: bool) -> HttpResponse:
    what = "Rebuild" if force else "Run"
    try:
        run = summaries_request(subject=subject, actor=dashboard_actor(request), force=force)
    except MemorywebError as exc:  # FeatureDisabled: nothing queued, the App switches it off
        messages.warning(request, f"Not queued: {exc.message}.")
    else:
        messages.info(
            request, f"{what} queued (job run {run.pk}); the documents refresh here when it finishes."
        )
    return _answer(request, subject)


@subject_view
@require_POST
def documents_rebuild(request: HttpRequest, subject) -> HttpResponse:
    """Queue a forced run: every conversation re-extracted, every scope composed again."""
    return _request_run(request, subject, force=True)


@subject_view
@require_POST
def documents_enqueue(request: HttpRequest, subject) -> HttpResponse:
    """Queue an ordinary run: the conversations changed since their last extraction."""
    return _request_run(request, subject, force=False)


@subject_view
@require_POST
def mental_model_refresh(request: HttpRequest, subject, document_id: int) -> HttpResponse:
    """Write a new version of one mental model from the memory as it is now."""
    document = get_object_or_404(
        MemoryDocument,
        subject=subject,
        pk=document_id,
        kind=DocumentKind.MENTAL_MODEL,
        pruned_at__isnull=True,
    )
    from chat.summaries import mental_models  # written beside this page (issue 11)

    before = document.current_id
    try:
        mental_models.mental_model_refresh(document=document, actor=dashboard_actor(request))
    except MemorywebError as exc:
        messages.warning(request, f"Not refreshed: {exc.message}.")
    else:
        document.refresh_from_db()
        label = document.name or document.path
        if document.current_id != before and document.current is not None:
            messages.success(request, f"Refreshed {label}: version {document.current.number}.")
        else:
            messages.info(request, f"Refreshed {label}: nothing changed.")
    return _answer(request, subject)


@subject_view
@require_POST
def mental_models_seed(request: HttpRequest, subject) -> HttpResponse:
    """Add the built-in mental models the subject does not have yet."""
    from chat.summaries import mental_models  # written beside this page (issue 11)

    existing = MemoryDocument.objects.filter(subject=subject, kind=DocumentKind.MENTAL_MODEL)
    before = existing.count()
    try:
        mental_models.mental_models_seed(subject=subject, actor=dashboard_actor(request))
    except MemorywebError as exc:
        messages.warning(request, f"Not seeded: {exc.message}.")
    else:
        added = existing.count() - before
        if added:
            messages.success(request, f"Added {added} built-in mental model{'s' if added != 1 else ''}.")
        else:
            messages.info(request, "Every built-in mental model is there already.")
    return _answer(request, subject)


class DiffForm(forms.Form):
    """`?from=N&to=M`: two version numbers of the document (`from` 0: the empty document)."""

    def __init__(self, data, *, numbers: list[int]):
        super().__init__(data)
        self.fields["from"] = forms.TypedChoiceField(
            coerce=int, choices=[(0, "empty"), *((n, f"v{n}") for n in numbers)], label="From"
        )
        self.fields["to"] = forms.TypedChoiceField(
            coerce=int, choices=[(n, f"v{n}") for n in numbers], label="To"
        )


def diff_lines(diff: str) -> list[dict]:
    """A unified diff as lines the template colours: file, hunk, add, del or context."""
    lines = []
    for text in diff.splitlines():
        if text.startswith(("---", "+++")):
            kind = "file"
        elif text.startswith("@@"):
            kind = "hunk"
        elif text.startswith("+"):
            kind = "add"
        elif text.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        lines.append({"kind": kind, "text": text})
    return lines


@subject_view
@require_GET
def document_history(request: HttpRequest, subject, document_id: int) -> HttpResponse:
    """A document's versions and the diff between two of them (default: the previous one to
    the current one). A pruned document keeps its history, so it is found here too."""
    document = get_object_or_404(
        MemoryDocument.objects.select_related("current"), subject=subject, pk=document_id
    )
    versions = document_versions(document=document)
    numbers = [version.number for version in versions]
    by_number = {version.number: version for version in versions}
    newest = document.current.number if document.current else (numbers[-1] if numbers else 0)
    previous = max((n for n in numbers if n < newest), default=0)
    data = {"from": request.GET.get("from", previous), "to": request.GET.get("to", newest)}
    form = DiffForm(data, numbers=numbers)
    diff, shown, status = [], None, 200
    if numbers and form.is_valid():
        shown = (form.cleaned_data["from"], form.cleaned_data["to"])
        older = by_number.get(shown[0])
        diff = diff_lines(version_diff(older, by_number[shown[1]], url=document.url))
    elif numbers:
        status = 400
    return render_page(
        request,
        subject,
        "dashboard/document_history.html",
        {
            "document": document,
            "versions": list(reversed(versions)),
            "form": form,
            "diff": diff,
            "shown": shown,
        },
        page="documents",
        status=status,
    )


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "documents/", documents, name="documents"),
    path(S + "documents/panel/", documents_panel, name="documents_panel"),
    path(S + "documents/rebuild/", documents_rebuild, name="documents_rebuild"),
    path(S + "documents/enqueue/", documents_enqueue, name="documents_enqueue"),
    path(S + "documents/mental-models/seed/", mental_models_seed, name="mental_models_seed"),
    path(S + "documents/<int:document_id>/history/", document_history, name="document_history"),
    path(S + "documents/<int:document_id>/refresh/", mental_model_refresh, name="mental_model_refresh"),
]
