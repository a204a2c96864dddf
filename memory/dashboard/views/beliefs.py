"""Beliefs: the subject's facts and notes as beliefs (memory/beliefs/), each with its confidence,
the evidence it rests on, its versions and the revisions that changed it with their reasons;
the person revises one with a reason of their own (revision_apply, decided_by "person").

The owner sees their own subject, staff every subject, anyone else a 404 (subject_view); a
belief of another subject is a 404 too.
"""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods

from memory.beliefs.read import (
    BeliefView,
    belief_get,
    belief_list,
    belief_ref,
    belief_revisions,
    belief_versions,
    evidence_ids_bulk,
)
from memory.models import Origin, RevisionAction
from memory.modes import modes_all
from memory.services.beliefs import MAX_REASON_CHARS, revision_apply
from memoryweb.errors import MemorywebError, NotFound

from .base import add_service_error, dashboard_actor, render_page, subject_config, subject_view

S = "s/<int:subject_id>/"
LIMIT = 100


class BeliefSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, label="Search")
    kind = forms.ChoiceField(
        required=False, choices=[("", "Facts and notes"), ("fact", "Facts"), ("note", "Notes")]
    )
    archived = forms.BooleanField(required=False, label="Include closed and archived")


class ReviseForm(forms.Form):
    action = forms.ChoiceField(choices=RevisionAction.choices)
    reason = forms.CharField(max_length=MAX_REASON_CHARS, help_text="Why: kept in the history.")
    value = forms.CharField(
        required=False, max_length=2000, help_text="Facts: the new value (SUPERSEDE, SPLIT_BY_…)."
    )
    mode = forms.ChoiceField(required=False, help_text="SPLIT_BY_MODE: the mode the new value holds in.")
    scope = forms.CharField(required=False, max_length=200, help_text="SPLIT_BY_SCOPE: its scope.")
    text = forms.CharField(required=False, max_length=300, help_text="MARK_EXCEPTION: what is excepted.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        mode = self.fields["mode"]
        assert isinstance(mode, forms.ChoiceField)
        mode.choices = [("", "—")] + [(m.name, f"{m.title} ({m.name})") for m in modes_all()]

    def claim(self) -> dict:
        data = self.cleaned_data
        return {k: data[k] for k in ("value", "mode", "scope", "text") if data.get(k)}


def _belief(subject, ref: str):
    try:
        return belief_get(subject=subject, ref=ref)
    except (NotFound, MemorywebError):
        raise Http404("no such belief") from None


@subject_view
@require_GET
def beliefs(request: HttpRequest, subject) -> HttpResponse:
    """Facts and notes as beliefs, newest first, with confidence and evidence."""
    form = BeliefSearchForm(request.GET)
    views: list[BeliefView] = []
    status = 400
    if form.is_valid():
        status = 200
        data = form.cleaned_data
        views = belief_list(
            subject=subject,
            kind=data.get("kind", ""),
            q=data.get("q", ""),
            archived=data["archived"],
            limit=LIMIT,
        )
    below = subject_config(subject)["beliefs.mirror.belowConfidence"]
    context = {"subject": subject, "form": form, "beliefs": views, "below": below, "limit": LIMIT}
    return render_page(request, subject, "dashboard/beliefs.html", context, page="beliefs", status=status)


def _detail_page(request, subject, belief, form, status=200):
    ref = belief_ref(belief)
    view = BeliefView(belief, evidence_ids_bulk([belief])[ref])
    context = {
        "subject": subject,
        "belief": view,
        "versions": belief_versions(belief),
        "revisions": belief_revisions(belief),
        "form": form,
    }
    return render_page(
        request, subject, "dashboard/belief_detail.html", context, page="beliefs", status=status
    )


@subject_view
@require_GET
def belief_detail(request: HttpRequest, subject, ref: str) -> HttpResponse:
    """One belief: versions, evidence, revisions with reasons, and the revise form."""
    return _detail_page(request, subject, _belief(subject, ref), ReviseForm())


@subject_view
@require_http_methods(["POST"])
def belief_revise(request: HttpRequest, subject, ref: str) -> HttpResponse:
    """Revise the belief as the person (decided_by "person"); the form again on an error."""
    belief = _belief(subject, ref)
    form = ReviseForm(request.POST)
    if form.is_valid():
        try:
            revision = revision_apply(
                subject=subject,
                belief=belief,
                action=form.cleaned_data["action"],
                reason=form.cleaned_data["reason"],
                claim=form.claim(),
                decided_by="person",
                actor=dashboard_actor(request),
                config=subject_config(subject),
                origin=Origin.DASHBOARD,
            )
        except MemorywebError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"{revision.get_action_display()}: {ref} revised.")
            results = revision.result_ids or [belief.pk]
            target = f"{ref[0]}:{results[-1]}"
            return redirect(reverse("dashboard:belief_detail", args=[subject.pk, target]))
    return _detail_page(request, subject, belief, form, status=400)


urlpatterns = [
    path(S + "beliefs/", beliefs, name="beliefs"),
    path(S + "beliefs/<str:ref>/", belief_detail, name="belief_detail"),
    path(S + "beliefs/<str:ref>/revise/", belief_revise, name="belief_revise"),
]
