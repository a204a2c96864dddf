"""Contract: how the person likes to work in each assistant mode (depth, directness, pushback,
pace), what it was learned from, and a form to correct it or reset it. Writes go through
memory/services/contract.py, like the API's."""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_POST

from memory.models import InteractionContract, Message
from memory.modes import mode_get, modes_all
from memory.person.contract import DIMENSIONS, GUIDANCE, is_shown, render, signal_count, style_count
from memory.services.contract import MAX_REASON_CHARS, contract_reset, contract_set
from memoryweb.errors import InvalidInput, MemorywebError

from .base import dashboard_actor, is_htmx, render_fragment, render_page, subject_config, subject_view

EVIDENCE_SHOWN = 5
EXCERPT_CHARS = 140


class ContractEditForm(forms.Form):
    """One mode's form; the mode is the page's hidden `mode` input, and the ids carry the mode
    (several cards share the page)."""

    reason = forms.CharField(
        max_length=MAX_REASON_CHARS, required=False, help_text="Why (optional): shown beside your setting."
    )

    def __init__(self, data=None, *, mode: str):
        super().__init__(data, auto_id=f"id_{mode}_%s")
        for name, values in DIMENSIONS.items():
            self.fields[name] = forms.ChoiceField(
                choices=[("", "— keep —"), *((v, v) for v in values)], required=False, label=name.capitalize()
            )

    def values(self) -> dict[str, str]:
        return {name: self.cleaned_data[name] for name in DIMENSIONS if self.cleaned_data.get(name)}


class ContractResetForm(forms.Form):
    mode = forms.CharField(max_length=50)
    dimension = forms.ChoiceField(choices=[(name, name) for name in DIMENSIONS], required=False)


def _excerpts(ids: list[int], subject) -> dict[int, str]:
    rows = Message.objects.filter(pk__in=ids, conversation__subject=subject).values_list("pk", "text")
    return {
        pk: (text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…") for pk, text in rows
    }


def _card(subject, mode_name: str, contract: InteractionContract | None, config, form=None) -> dict:
    try:
        mode = mode_get(mode_name)
        title, renders = mode.title, bool(config["contract.enabled"] and mode.renders.get("contract", False))
    except InvalidInput:
        title, renders = mode_name, False  # a row of a mode whose custom manifest is gone
    dimensions = (contract.dimensions if contract else {}) or {}
    minimum = config["contract.minConfidence"]
    evidence_ids = [
        i for state in dimensions.values() if isinstance(state, dict) for i in state.get("evidence") or []
    ]
    excerpts = _excerpts(evidence_ids, subject)
    rows: list[dict] = []
    for name in DIMENSIONS:
        state = dimensions.get(name)
        if not isinstance(state, dict) or state.get("value") not in DIMENSIONS[name]:
            rows.append({"name": name, "state": None})
            continue
        evidence = [(i, excerpts[i]) for i in reversed(state.get("evidence") or []) if i in excerpts]
        rows.append(
            {
                "name": name,
                "state": state,
                "guidance": GUIDANCE[(name, state["value"])],
                "shown": is_shown(name, state, min_confidence=minimum),
                "signals": signal_count(state),
                "style_messages": style_count(state),
                "evidence": evidence[:EVIDENCE_SHOWN],
            }
        )
    return {
        "subject": subject,
        "mode_name": mode_name,
        "title": title,
        "renders": renders,
        "contract": contract,
        "rows": rows,
        "text": render(dimensions, min_confidence=minimum, cap=config["contract.maxTokens"])[0]
        if renders
        else "",
        "form": form or ContractEditForm(mode=mode_name),
        "min_confidence": minimum,
    }


def _anchor(subject, mode_name: str) -> str:
    return reverse("dashboard:contract", args=[subject.pk]) + f"#contract-{mode_name}"


@subject_view
@require_GET
def contract(request: HttpRequest, subject) -> HttpResponse:
    config = subject_config(subject)
    stored = {c.mode: c for c in InteractionContract.objects.filter(subject=subject)}
    names = [m.name for m in modes_all()]
    names += sorted(set(stored) - set(names))
    # what was learned first, then the other modes, each in the registry's order
    names.sort(key=lambda name: name not in stored)
    cards = [_card(subject, name, stored.get(name), config) for name in names]
    return render_page(request, subject, "dashboard/contract.html", {"cards": cards}, page="contract")


def _respond_card(request, subject, mode_name: str, *, status: int = 200, form=None) -> HttpResponse:
    if not is_htmx(request):
        return redirect(_anchor(subject, mode_name))
    contract = InteractionContract.objects.filter(subject=subject, mode=mode_name).first()
    card = _card(subject, mode_name, contract, subject_config(subject), form=form)
    return render_fragment(
        request, "dashboard/partials/contract_card.html", {"subject": subject, "card": card}, status=status
    )


@subject_view
@require_POST
def contract_edit(request: HttpRequest, subject) -> HttpResponse:
    """Set the dimensions chosen in one mode's form (the person's setting wins over what was
    observed until they reset it); answers that mode's card."""
    mode_name = request.POST.get("mode", "")
    try:
        mode_name = mode_get(mode_name).name
    except InvalidInput:
        raise Http404("no such mode") from None
    form = ContractEditForm(request.POST, mode=mode_name)
    if form.is_valid():
        try:
            contract_set(
                subject=subject,
                mode=mode_name,
                values=form.values(),
                reason=form.cleaned_data["reason"],
                actor=dashboard_actor(request),
                config=subject_config(subject),
            )
        except MemorywebError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(
                request, f"Saved your contract for {mode_name}. Observation leaves it as you set it."
            )
            return _respond_card(request, subject, mode_name)
    if not is_htmx(request):
        for field, errors in form.errors.items():
            messages.error(request, f"{field.capitalize()}: {' '.join(str(e) for e in errors)}")
    return _respond_card(request, subject, mode_name, status=400, form=form)


@subject_view
@require_POST
def contract_reset_view(request: HttpRequest, subject) -> HttpResponse:
    """Forget one mode's contract, or one dimension of it; observation starts again."""
    form = ContractResetForm(request.POST)
    if not form.is_valid():
        raise Http404("no such mode or dimension")
    mode_name = form.cleaned_data["mode"]
    if not InteractionContract.objects.filter(subject=subject, mode=mode_name).exists():
        try:
            mode_get(mode_name)
        except InvalidInput:
            raise Http404("no such mode") from None
    dimension = form.cleaned_data["dimension"] or None
    dropped = contract_reset(
        subject=subject, actor=dashboard_actor(request), mode=mode_name, dimension=dimension
    )
    what = f"{dimension} in {mode_name}" if dimension else f"the contract of {mode_name}"
    if dropped:
        messages.success(request, f"Reset {what}: it will be learned again from your messages.")
    else:
        messages.info(request, "Nothing to reset.")
    return _respond_card(request, subject, mode_name)


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "contract/", contract, name="contract"),
    path(S + "contract/edit/", contract_edit, name="contract_edit"),
    path(S + "contract/reset/", contract_reset_view, name="contract_reset"),
]
