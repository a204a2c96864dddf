"""Notes: search as you type with filters, add, vote, edit (a new version), park, forget; bulk
actions on the selected notes; note detail."""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory import services
from memory.dashboard.writers import writer_origins
from memory.models import ConsentCategory, ItemKind, Note, Origin, Signal
from memory.modes import mode_names
from memory.selectors import note_browse, note_dossier, note_facets
from memory.services.notes import TAG_RE
from memoryweb.errors import MemorywebError

from .base import (
    add_service_error,
    dashboard_actor,
    is_htmx,
    owned_or_404,
    render_fragment,
    render_page,
    report_edit,
    split_list,
    subject_config,
    subject_view,
)

PAGE_SIZE = 25
NO_CATEGORY = "none"


class NoteSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, label="Search")
    tags = forms.CharField(required=False, max_length=500, help_text="Comma-separated; all must match.")
    scope = forms.CharField(required=False, max_length=200)
    archived = forms.ChoiceField(
        required=False,
        choices=[
            ("live", "Live notes"),
            ("parked", "Parked (kept, never in a context)"),
            ("archived", "Archived (in a lesson)"),
            ("all", "All notes"),
        ],
    )
    category = forms.ChoiceField(required=False)
    app = forms.CharField(required=False, max_length=100, help_text="The app that wrote them.")
    page = forms.IntegerField(required=False, min_value=1, max_value=10_000)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        categories = [(c.slug, c.name) for c in ConsentCategory.objects.order_by("name")]
        self.fields["category"].choices = [("", "Any category"), (NO_CATEGORY, "No category")] + categories

    def clean_tags(self) -> list[str]:
        tags = [tag.lower() for tag in split_list(self.cleaned_data.get("tags", ""))]
        for tag in tags:
            if not TAG_RE.match(tag):
                raise forms.ValidationError(f"{tag!r} is not a tag: letters, digits and : . / - _ only.")
        return tags

    def browse_kwargs(self) -> dict:
        data = self.cleaned_data
        category = data.get("category") or None
        return {
            "query": data.get("q", "").strip(),
            "tags": data.get("tags", []),
            "scope": data.get("scope") or None,
            "archived": data.get("archived") or "live",
            "category": "" if category == NO_CATEGORY else category,
        }


class NoteEditForm(forms.Form):
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}))
    tags = forms.CharField(required=False, max_length=1000, help_text="Comma-separated.")

    def clean_tags(self) -> list[str]:
        return split_list(self.cleaned_data.get("tags", ""))


class NoteAddForm(NoteEditForm):
    """The person writes a note themselves (stored as the API stores one: `note_store`)."""


BULK_LIMIT = 200
BULK_ACTIONS = [
    ("park", "Park"),
    ("unpark", "Unpark"),
    ("up", "Vote up"),
    ("down", "Vote down"),
    ("tag_add", "Add tag"),
    ("tag_remove", "Remove tag"),
    ("forget", "Forget"),
]


class BulkForm(forms.Form):
    """The selected items (`ids`) and the action on them; `noun` names an item in the
    messages ("note"; the lessons and procedures pages use this form too)."""

    action = forms.ChoiceField(choices=BULK_ACTIONS)
    tag = forms.CharField(required=False, max_length=50)
    confirmed = forms.BooleanField(required=False)
    # how many items the confirmation named: more ticked since then are asked about again
    count = forms.IntegerField(required=False, min_value=1, max_value=BULK_LIMIT)

    def __init__(self, data, *args, noun: str = "note", **kwargs):
        super().__init__(data, *args, **kwargs)
        self.noun = noun
        self.raw_ids = data.getlist("ids") if hasattr(data, "getlist") else []

    def clean(self):
        data = super().clean()
        noun = self.noun
        try:
            ids = sorted({int(raw) for raw in self.raw_ids})
        except ValueError:
            raise forms.ValidationError(f"Ids: each selected {noun} is a number.") from None
        if not ids:
            raise forms.ValidationError(f"Select at least one {noun}.")
        if len(ids) > BULK_LIMIT:
            raise forms.ValidationError(f"Select at most {BULK_LIMIT} {noun}s at once.")
        data["ids"] = ids
        if data.get("action") in ("tag_add", "tag_remove"):
            tag = (data.get("tag") or "").strip().lower()
            if not TAG_RE.match(tag):
                self.add_error("tag", "Give a tag: letters, digits and : . / - _ only.")
            data["tag"] = tag
        return data


class VoteForm(forms.Form):
    signal = forms.ChoiceField(choices=[(Signal.UP, "up"), (Signal.DOWN, "down")])
    # the mode of the page the vote was given on (its `?mode=`, e.g. followed from a context
    # preview built in that mode); "" = none. Recorded on the VoteEvent (docs/feedback.md).
    mode = forms.ChoiceField(
        required=False,
        error_messages={"invalid_choice": "There is no mode %(value)s; choose one of the known modes."},
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        mode_field = self.fields["mode"]
        assert isinstance(mode_field, forms.ChoiceField)
        mode_field.choices = [("", "none")] + [(name, name) for name in sorted(mode_names())]


def _notes_page(
    request, subject, form: NoteSearchForm, *, add_form=None, bulk_confirm=None, status: int = 200
) -> HttpResponse:
    context = _results_context(subject, form) if form.is_valid() else {"subject": subject, "results": []}
    context.update(
        form=form,
        facets=note_facets(subject=subject),
        add_form=add_form or NoteAddForm(),
        bulk_confirm=bulk_confirm,
    )
    return render_page(request, subject, "dashboard/notes.html", context, page="notes", status=status)


def _results_context(subject, form: NoteSearchForm) -> dict:
    page = form.cleaned_data.get("page") or 1
    results, total = note_browse(
        subject=subject,
        limit=PAGE_SIZE,
        offset=(page - 1) * PAGE_SIZE,
        origins=writer_origins(subject, form.cleaned_data.get("app", "")),
        **form.browse_kwargs(),
    )
    params = {k: v for k, v in form.data.items() if k != "page" and v}
    return {
        "subject": subject,
        "results": results,
        "total": total,
        "page_number": page,
        "has_previous": page > 1,
        "has_next": page * PAGE_SIZE < total,
        "previous_query": urlencode({**params, "page": page - 1}),
        "next_query": urlencode({**params, "page": page + 1}),
        "searching": bool(form.cleaned_data.get("q", "").strip()),
        "filtered": any(v for k, v in form.data.items() if k not in ("page", "q", "archived"))
        or form.cleaned_data.get("archived", "live") not in ("", "live"),
    }


@subject_view
@require_GET
def notes(request: HttpRequest, subject) -> HttpResponse:
    """The page, or (for htmx) just the results for the current search and filters."""
    form = NoteSearchForm(request.GET)
    valid = form.is_valid()
    context = _results_context(subject, form) if valid else {"subject": subject, "results": []}
    context["form"] = form
    status = 200 if valid else 400
    if is_htmx(request):
        return render_fragment(request, "dashboard/partials/notes_results.html", context, status=status)
    return _notes_page(request, subject, form, status=status)


@subject_view
@require_POST
def note_add(request: HttpRequest, subject) -> HttpResponse:
    """The person writes a note: stored through `note_store` as the API stores one (deduplicated,
    audited as `note.stored`, origin dashboard). Their own write needs no consent: it is theirs."""
    form = NoteAddForm(request.POST)
    if form.is_valid():
        try:
            note, created = services.note_store(
                subject=subject,
                content=form.cleaned_data["content"],
                tags=form.cleaned_data["tags"],
                origin=Origin.DASHBOARD,
                actor=dashboard_actor(request),
                config=subject_config(subject),
            )
        except MemorywebError as error:
            add_service_error(form, error)
        else:
            if created:
                messages.success(request, f"Saved note n:{note.pk}.")
            else:
                messages.info(request, f"Note n:{note.pk} already said that: nothing new was stored.")
            return redirect("dashboard:notes", subject_id=subject.pk)
    return _notes_page(request, subject, NoteSearchForm({}), add_form=form, status=400)


def _safe_next(request: HttpRequest) -> str:
    """The `next` field of a no-JavaScript form, if it points back into this site."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return ""


def _detail_context(subject, note: Note) -> dict:
    return {
        "subject": subject,
        "note": note,
        **note_dossier(note=note),
        "retention_days": subject_config(subject)["retention.retrievalEventDays"],
    }


@subject_view
@require_GET
def note_detail(request: HttpRequest, subject, note_id: int) -> HttpResponse:
    note = owned_or_404(Note, subject, note_id)
    context = _detail_context(subject, note)
    context["edit_form"] = NoteEditForm(initial={"content": note.content, "tags": ", ".join(note.tags)})
    context["editing"] = request.GET.get("edit") == "1"
    return render_page(request, subject, "dashboard/note_detail.html", context, page="notes")


def vote_mode(form: VoteForm) -> str:
    """The mode the answered vote widget keeps sending: the one this vote was given in."""
    return (getattr(form, "cleaned_data", None) or {}).get("mode", "")


def vote_submit(request: HttpRequest, subject, *, item, item_kind: str) -> tuple["VoteForm", int]:
    """Validate the vote form and cast the person's vote (votes service) on a note, lesson or
    procedure: their one vote, which the same button again withdraws and the other one changes.
    Sets `item.vote_score`, and for a request without htmx says what happened in a message.
    Returns the form (with the refusal on its `signal` field) and the status to answer."""
    form = VoteForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            _, item.vote_score = services.vote_cast(
                subject=subject,
                item_kind=item_kind,
                item_id=item.pk,
                signal=form.cleaned_data["signal"],
                actor=dashboard_actor(request),
                config=subject_config(subject),
                mode=form.cleaned_data["mode"],
                person=True,  # one vote per person, changed or withdrawn by the buttons
            )
        except MemorywebError as error:  # voting switched off for the app
            form.add_error("mode" if error.field == "mode" else "signal", error.message)
        else:
            status = 200
    if not is_htmx(request):
        if status == 200:
            vote = services.person_vote(item_kind=item_kind, item_id=item.pk, actor=dashboard_actor(request))
            said = {1: "Voted up", -1: "Voted down", 0: "Vote withdrawn"}[vote]
            messages.success(request, f"{said}: the score is now {item.vote_score:+.2f}.")
        else:
            refusal = [str(e) for field in ("signal", "mode") for e in form.errors.get(field, [])]
            messages.error(request, " ".join(refusal) or "Choose up or down to vote.")
    return form, status


@subject_view
@require_POST
def note_vote(request: HttpRequest, subject, note_id: int) -> HttpResponse:
    """Vote a note up or down (votes service); answers the updated vote widget."""
    note = owned_or_404(Note, subject, note_id)
    form, status = vote_submit(request, subject, item=note, item_kind=ItemKind.NOTE)
    if not is_htmx(request):
        return redirect(_safe_next(request) or reverse("dashboard:note_detail", args=[subject.pk, note.pk]))
    context = {
        "subject": subject,
        "note": note,
        "vote_form": form,
        "vote_mode": vote_mode(form),
        "next_url": _safe_next(request),
    }
    return render_fragment(request, "dashboard/partials/notes_vote.html", context, status=status)


@subject_view
@require_http_methods(["GET", "POST"])
def note_edit(request: HttpRequest, subject, note_id: int) -> HttpResponse:
    """GET: the editor (fragment). POST: a new version of the note; earlier versions stay."""
    note = owned_or_404(Note, subject, note_id)
    if request.method == "GET":
        if not is_htmx(request):
            detail = reverse("dashboard:note_detail", args=[subject.pk, note.pk])
            return redirect(f"{detail}?edit=1#edit")
        form = NoteEditForm(initial={"content": note.content, "tags": ", ".join(note.tags)})
        context = {"subject": subject, "note": note, "edit_form": form}
        return render_fragment(request, "dashboard/partials/note_detail_edit.html", context)

    form = NoteEditForm(request.POST)
    if form.is_valid():
        try:
            before = note.version
            note = services.note_edit(
                note=note,
                content=form.cleaned_data["content"],
                tags=form.cleaned_data["tags"],
                origin="dashboard",
                actor=dashboard_actor(request),
                config=subject_config(subject),
            )
        except MemorywebError as error:
            add_service_error(form, error)
        else:
            report_edit(request, before=before, after=note.version)
            if not is_htmx(request):
                return redirect("dashboard:note_detail", subject_id=subject.pk, note_id=note.pk)
            context = _detail_context(subject, note)
            return render_fragment(request, "dashboard/partials/note_detail_content.html", context)
    context = {"subject": subject, "note": note, "edit_form": form}
    if not is_htmx(request):
        context.update(_detail_context(subject, note))
        return render_page(request, subject, "dashboard/note_detail.html", context, page="notes", status=400)
    return render_fragment(request, "dashboard/partials/note_detail_edit.html", context, status=400)


@subject_view
@require_POST
def note_forget(request: HttpRequest, subject, note_id: int) -> HttpResponse:
    """Delete the note with its versions and links (the audit keeps its id)."""
    note = owned_or_404(Note, subject, note_id)
    services.note_forget(note=note, actor=dashboard_actor(request))
    messages.success(request, f"Forgot note {note_id}.")
    if is_htmx(request):
        # the list's search and filters come along (hx-include), so its count can follow
        form = NoteSearchForm(request.POST)
        context = {"note_id": note_id, "total": None}
        if form.is_valid():
            counted = _results_context(subject, form)
            context.update(total=counted["total"], searching=counted["searching"])
        return render_fragment(request, "dashboard/partials/notes_removed.html", context)
    return redirect("dashboard:notes", subject_id=subject.pk)


def bulk_vote(request: HttpRequest, subject, *, item_kind: str, item_id: int, up: bool) -> bool:
    """Set the person's one vote on the item up or down (never withdrawn: that is the single
    item's button); returns whether it changed."""
    actor = dashboard_actor(request)
    if services.person_vote(item_kind=item_kind, item_id=item_id, actor=actor) == (1 if up else -1):
        return False
    services.vote_cast(
        subject=subject,
        item_kind=item_kind,
        item_id=item_id,
        signal=Signal.UP if up else Signal.DOWN,
        actor=actor,
        config=subject_config(subject),
        person=True,
    )
    return True


def bulk_selection(request: HttpRequest, form: forms.Form, queryset, *, noun: str, asks: str):
    """The items a bulk form selects, with its action, or None when the form is invalid (the
    errors are a message). Every id must be in `queryset` (the subject's own), else 404 and
    nothing changes; the action `asks` (forget, delete, remove) first answers a confirmation
    (`confirm`: the ids and their count) until it comes back `confirmed` with that count."""
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
        return None
    ids, action = form.cleaned_data["ids"], form.cleaned_data["action"]
    items = list(queryset.filter(pk__in=ids).order_by("pk"))
    if len(items) != len(ids):  # another subject's, or none: as owned_or_404
        raise Http404(f"No such {noun}.")
    confirmed = form.cleaned_data["confirmed"] and form.cleaned_data["count"] == len(ids)
    confirm = {"ids": ids, "count": len(ids)} if action == asks and not confirmed else None
    return action, items, confirm


def _bulk_apply(request: HttpRequest, subject, action: str, notes: list[Note], tag: str) -> int:
    """Apply one bulk action to the notes (all of the subject); returns how many changed."""
    actor = dashboard_actor(request)
    config = subject_config(subject)
    changed = 0
    for note in notes:
        if action in ("park", "unpark"):
            changed += services.item_park(item=note, parked=action == "park", actor=actor)
        elif action == "forget":
            services.note_forget(note=note, actor=actor)
            changed += 1
        elif action in ("up", "down"):
            changed += bulk_vote(
                request, subject, item_kind=ItemKind.NOTE, item_id=note.pk, up=action == "up"
            )
        else:
            if action == "tag_add":
                tags = note.tags if tag in note.tags else [*note.tags, tag]
            else:
                tags = [t for t in note.tags if t != tag]
            if tags != note.tags:  # a new version of the note, as an edit writes
                services.note_edit(note=note, tags=tags, origin=Origin.DASHBOARD, actor=actor, config=config)
                changed += 1
    return changed


BULK_DONE = {
    "park": "Parked",
    "unpark": "Unparked",
    "forget": "Forgot",
    "up": "Voted up",
    "down": "Voted down",
    "tag_add": "Tagged",
    "tag_remove": "Untagged",
}


@subject_view
@require_POST
def notes_bulk(request: HttpRequest, subject) -> HttpResponse:
    """One action on the selected notes (`ids`): park, unpark, vote up or down (the person's one
    vote), add or remove a tag, or forget — which asks first (`confirmed`, with the `count` it
    named). Every id must be one
    of the subject's notes, else 404 and nothing changes; all or nothing. Answers the list again
    (htmx, with the search and filters of the page) or goes back to it."""
    form = BulkForm(request.POST)
    search = NoteSearchForm(request.POST)
    status, confirm = 200, None
    selected = bulk_selection(request, form, Note.objects.filter(subject=subject), noun="note", asks="forget")
    if selected is None:
        status = 400
    else:
        action, notes, confirm = selected
        if confirm is None:
            try:
                with transaction.atomic():
                    changed = _bulk_apply(request, subject, action, notes, form.cleaned_data["tag"])
            except MemorywebError as error:
                status = 400
                messages.error(request, f"Nothing changed: {error.message}")
            else:
                label = "note" if changed == 1 else "notes"
                messages.success(request, f"{BULK_DONE[action]} {changed} {label}.")
    if not is_htmx(request):
        if status == 200 and confirm is None:  # back to the list, or the note page it came from
            return redirect(_safe_next(request) or reverse("dashboard:notes", args=[subject.pk]))
        return _notes_page(request, subject, search, bulk_confirm=confirm, status=status)
    context = _results_context(subject, search) if search.is_valid() else {"subject": subject, "results": []}
    context.update(form=search, bulk_confirm=confirm)
    return render_fragment(request, "dashboard/partials/notes_results.html", context, status=status)
