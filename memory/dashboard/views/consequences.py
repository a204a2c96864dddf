"""Consequences: what came of earlier advice (memory/person/consequences.py) — each chain's
action → outcome → tendency with links to its turns; correct a chain's wording or tendency,
delete one. Beside them, the person's current state in their most recent conversations
(urgency, focus, frustration as they have decayed by now; memory/person/state.py).

Writes go through memory/services/consequences.py, like the API's.
"""

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memory.models import Consequence, Conversation, Outcome
from memory.person.consequences import MAX_ACTION_CHARS, MAX_OUTCOME_CHARS, MAX_TENDENCY_CHARS
from memory.person.state import DIMENSIONS, state_read
from memory.services.consequences import consequence_delete, consequence_edit
from memoryweb.errors import MemorywebError

from .base import add_service_error, dashboard_actor, owned_or_404, render_page, subject_config, subject_view

S = "s/<int:subject_id>/"
LIMIT = 100
STATE_CONVERSATIONS = 10


class ConsequenceEditForm(forms.Form):
    action = forms.CharField(max_length=MAX_ACTION_CHARS, help_text="The advice, in short.")
    outcome = forms.ChoiceField(choices=Outcome.choices)
    outcome_text = forms.CharField(max_length=MAX_OUTCOME_CHARS, label="What came of it")
    tendency = forms.CharField(
        max_length=MAX_TENDENCY_CHARS,
        required=False,
        help_text='What it says about your setting, e.g. "fragile to sweeping changes". Empty: none.',
    )


def _form(chain: Consequence, data=None) -> ConsequenceEditForm:
    initial = {k: getattr(chain, k) for k in ("action", "outcome", "outcome_text", "tendency")}
    return ConsequenceEditForm(data, initial=initial, auto_id=f"id_c{chain.pk}_%s")


def _states(subject, config) -> list[dict]:
    now = timezone.now()
    conversations = Conversation.objects.filter(subject=subject, state__isnull=False).order_by(
        "-state__updated_at", "-id"
    )[:STATE_CONVERSATIONS]
    rows = []
    for conversation in conversations:
        state = state_read(conversation=conversation, config=config, now=now)
        state["levels_list"] = [(d, state["levels"][d]) for d in DIMENSIONS]
        rows.append({"conversation": conversation, "state": state})
    return rows


def _page(request, subject, *, forms_by_id=None, status=200) -> HttpResponse:
    chains = list(
        Consequence.objects.filter(subject=subject)
        .select_related("conversation")
        .order_by("-created_at", "-id")[:LIMIT]
    )
    forms_by_id = forms_by_id or {}
    rows = [{"chain": c, "form": forms_by_id.get(c.pk) or _form(c)} for c in chains]
    context = {"subject": subject, "rows": rows, "states": _states(subject, subject_config(subject))}
    return render_page(
        request, subject, "dashboard/consequences.html", context, page="consequences", status=status
    )


@subject_view
@require_GET
def consequences(request: HttpRequest, subject) -> HttpResponse:
    return _page(request, subject)


@subject_view
@require_POST
def consequence_edit_view(request: HttpRequest, subject, consequence_id: int) -> HttpResponse:
    chain = owned_or_404(Consequence, subject, consequence_id)
    form = _form(chain, request.POST)
    if form.is_valid():
        try:
            consequence_edit(consequence=chain, actor=dashboard_actor(request), **form.cleaned_data)
        except MemorywebError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"Saved consequence {chain.pk}.")
            return redirect(reverse("dashboard:consequences", args=[subject.pk]) + f"#consequence-{chain.pk}")
    chain.refresh_from_db()
    return _page(request, subject, forms_by_id={chain.pk: form}, status=400)


@subject_view
@require_POST
def consequence_delete_view(request: HttpRequest, subject, consequence_id: int) -> HttpResponse:
    chain = owned_or_404(Consequence, subject, consequence_id)
    consequence_delete(consequence=chain, actor=dashboard_actor(request))
    messages.success(request, f"Deleted consequence {consequence_id}. Its messages stay.")
    return redirect("dashboard:consequences", subject_id=subject.pk)


urlpatterns = [
    path(S + "consequences/", consequences, name="consequences"),
    path(S + "consequences/<int:consequence_id>/edit/", consequence_edit_view, name="consequence_edit"),
    path(S + "consequences/<int:consequence_id>/delete/", consequence_delete_view, name="consequence_delete"),
]
