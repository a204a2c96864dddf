"""Profile: the subject's active facts, add, inline edit (a new version), park, remove, history;
bulk park, unpark or remove of the selected facts."""

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory import services
from memory.beliefs.read import fact_versions_revisions
from memory.context import profile_demand
from memory.dashboard.writers import writer_origins
from memory.models import Origin, ProfileFact
from memory.selectors import fact_history as select_fact_history
from memory.selectors import fact_list, item_reads
from memory.services.facts import MAX_VALUE_CHARS
from memoryweb.errors import MemorywebError

from .base import (
    add_service_error,
    dashboard_actor,
    is_htmx,
    render_fragment,
    render_page,
    split_list,
    subject_config,
    subject_view,
)
from .notes import BulkForm, bulk_selection


class FactEditForm(forms.Form):
    value = forms.CharField(max_length=MAX_VALUE_CHARS, widget=forms.Textarea(attrs={"rows": 2}))
    pinned = forms.BooleanField(
        required=False, help_text="Pinned facts are always in the context; others only on a keyword."
    )
    keywords = forms.CharField(
        required=False,
        max_length=1000,
        help_text="Comma-separated. A fact that is not pinned needs at least one.",
    )

    def clean_keywords(self) -> list[str]:
        return split_list(self.cleaned_data.get("keywords", ""))


class FactAddForm(FactEditForm):
    key = forms.CharField(max_length=100, help_text="e.g. name, city, diet")

    field_order = ["key", "value", "pinned", "keywords"]


def _active_fact(subject, fact_id: int) -> ProfileFact:
    """The subject's fact with this id, if it is the active version (404 otherwise)."""
    return get_object_or_404(ProfileFact, subject=subject, pk=fact_id, valid_to=None)


def _edit_initial(fact: ProfileFact) -> dict:
    return {"value": fact.value, "pinned": fact.pinned, "keywords": ", ".join(fact.keywords)}


def _budget(subject) -> dict:
    """The profile as a memory block: what its facts need of `profile.maxTokens`
    (memory.context.profile_demand), with the bar's widths and its text."""
    demand = profile_demand(subject=subject, config=subject_config(subject))
    cap, always, needed = demand["cap"], demand["always"], demand["all"]
    scale = max(cap, needed, 1)
    return {
        **demand,
        "contextual": needed - always,
        "other_count": demand["count"] - demand["always_count"],
        "over": needed > cap,
        "excess": max(needed - cap, 0),
        "room": max(cap - needed, 0),
        "value_now": min(needed, cap),
        "always_width": f"{100 * always / scale:.2f}",
        "contextual_width": f"{100 * (needed - always) / scale:.2f}",
        "text": f"{needed:,} of {cap:,} tokens (profile.maxTokens)"
        + (f", {needed - cap:,} over" if needed > cap else ""),
    }


def _with_budget(response: HttpResponse, request, subject) -> HttpResponse:
    """A changed row's fragment, with the memory block sent along to replace the page's."""
    response.content += render_to_string(
        "dashboard/partials/profile_budget.html", {"budget": _budget(subject), "oob": True}, request=request
    ).encode()
    return response


def _profile_page(
    request, subject, *, add_form=None, editing=None, edit_form=None, bulk_confirm=None, status=200
):
    app = request.GET.get("app", "")
    return render_page(
        request,
        subject,
        "dashboard/profile.html",
        {
            "facts": fact_list(subject=subject, include_parked=True, origins=writer_origins(subject, app)),
            "app_filter": app,
            "add_form": add_form or FactAddForm(initial={"pinned": True}),
            "editing": editing,
            "edit_form": edit_form,
            "budget": _budget(subject),
            "bulk_confirm": bulk_confirm,
        },
        page="profile",
        status=status,
    )


@subject_view
@require_GET
def profile(request: HttpRequest, subject) -> HttpResponse:
    return _profile_page(request, subject)


@subject_view
@require_POST
def fact_add(request: HttpRequest, subject) -> HttpResponse:
    form = FactAddForm(request.POST)
    if form.is_valid():
        try:
            fact, changed = services.fact_set(
                subject=subject,
                key=form.cleaned_data["key"],
                value=form.cleaned_data["value"],
                pinned=form.cleaned_data["pinned"],
                keywords=form.cleaned_data["keywords"],
                origin=Origin.DASHBOARD,
                actor=dashboard_actor(request),
            )
        except MemorywebError as error:
            add_service_error(form, error)
        else:
            text = f"Saved {fact.key}." if changed else f"{fact.key} already had that value: confirmed."
            messages.success(request, text)
            if not is_htmx(request):
                return redirect("dashboard:profile", subject_id=subject.pk)
            context = {
                "subject": subject,
                "facts": fact_list(subject=subject, include_parked=True),
                "add_form": FactAddForm(initial={"pinned": True}),
                "budget": _budget(subject),
            }
            return render_fragment(request, "dashboard/partials/profile_body.html", context)
    if not is_htmx(request):
        return _profile_page(request, subject, add_form=form, status=400)
    context = {
        "subject": subject,
        "facts": fact_list(subject=subject, include_parked=True),
        "add_form": form,
        "budget": _budget(subject),
    }
    return render_fragment(request, "dashboard/partials/profile_body.html", context, status=400)


@subject_view
@require_GET
def fact_row(request: HttpRequest, subject, fact_id: int) -> HttpResponse:
    """One fact's row (what "cancel" on the inline editor brings back)."""
    fact = _active_fact(subject, fact_id)
    return render_fragment(
        request, "dashboard/partials/profile_fact_row.html", {"subject": subject, "fact": fact}
    )


@subject_view
@require_http_methods(["GET", "POST"])
def fact_edit(request: HttpRequest, subject, fact_id: int) -> HttpResponse:
    """GET: the inline editor. POST: write a new version (the old one stays in the history)."""
    fact = _active_fact(subject, fact_id)
    if request.method == "GET":
        form = FactEditForm(initial=_edit_initial(fact))
        if not is_htmx(request):
            return _profile_page(request, subject, editing=fact.pk, edit_form=form)
        context = {"subject": subject, "fact": fact, "form": form}
        return render_fragment(request, "dashboard/partials/profile_fact_form.html", context)

    form = FactEditForm(request.POST)
    if form.is_valid():
        try:
            new_fact, changed = services.fact_set(
                subject=subject,
                key=fact.key,
                value=form.cleaned_data["value"],
                pinned=form.cleaned_data["pinned"],
                keywords=form.cleaned_data["keywords"],
                mode=fact.mode,
                scope=fact.scope,
                confidence=1.0,  # the person's own word is certain, whatever the extractor thought
                category=fact.category,
                origin=Origin.DASHBOARD,
                actor=dashboard_actor(request),
            )
        except MemorywebError as error:
            add_service_error(form, error)
        else:
            if changed:
                messages.success(request, f"Saved a new version of {fact.key}.")
            else:
                messages.info(request, f"{fact.key} is unchanged: counted as a confirmation.")
            if not is_htmx(request):
                return redirect("dashboard:profile", subject_id=subject.pk)
            context = {"subject": subject, "fact": new_fact}
            response = render_fragment(request, "dashboard/partials/profile_fact_row.html", context)
            return _with_budget(response, request, subject)
    if not is_htmx(request):
        return _profile_page(request, subject, editing=fact.pk, edit_form=form, status=400)
    context = {"subject": subject, "fact": fact, "form": form}
    return render_fragment(request, "dashboard/partials/profile_fact_form.html", context, status=400)


class ParkForm(forms.Form):
    parked = forms.TypedChoiceField(choices=[("1", "park"), ("0", "unpark")], coerce=lambda v: v == "1")


@subject_view
@require_POST
def fact_park(request: HttpRequest, subject, fact_id: int) -> HttpResponse:
    """Park the fact (kept here, never in a context, search or tool) or unpark it."""
    fact = _active_fact(subject, fact_id)
    form = ParkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose park or unpark.")
        status = 400
    else:
        parked = form.cleaned_data["parked"]
        services.item_park(item=fact, parked=parked, actor=dashboard_actor(request))
        if parked:
            messages.success(
                request, f"Parked {fact.key}: kept, and out of every context until you unpark it."
            )
        else:
            messages.success(request, f"Unparked {fact.key}: it is back in the context.")
        status = 200
    if not is_htmx(request):
        return redirect("dashboard:profile", subject_id=subject.pk)
    context = {"subject": subject, "fact": fact}
    response = render_fragment(request, "dashboard/partials/profile_fact_row.html", context, status=status)
    return _with_budget(response, request, subject)


@subject_view
@require_POST
def fact_remove(request: HttpRequest, subject, fact_id: int) -> HttpResponse:
    """Close the active version; the history keeps every value it had."""
    fact = _active_fact(subject, fact_id)
    services.fact_remove(
        subject=subject, key=fact.key, mode=fact.mode, scope=fact.scope, actor=dashboard_actor(request)
    )
    messages.success(request, f"Removed {fact.key}. Its history is kept.")
    if not is_htmx(request):
        return redirect("dashboard:profile", subject_id=subject.pk)
    response = render_fragment(request, "dashboard/partials/profile_removed.html", {"fact": fact})
    return _with_budget(response, request, subject)


@subject_view
@require_GET
def fact_history(request: HttpRequest, subject, fact_id: int) -> HttpResponse:
    """Every version of the fact's key (all modes and scopes), oldest first."""
    fact = get_object_or_404(ProfileFact, subject=subject, pk=fact_id)
    versions = select_fact_history(subject=subject, key=fact.key)
    fact_versions_revisions(versions)  # each version's revisions, with their reasons
    context = {"subject": subject, "fact": fact, "versions": versions}
    if is_htmx(request):
        return render_fragment(request, "dashboard/partials/profile_history.html", context)
    # every version of the key is its own item ("f:ID") to the context builds that chose it
    reads = [read for v in versions for read in item_reads(subject_id=subject.pk, ref=f"f:{v.pk}")]
    context["reads"] = sorted(reads, key=lambda r: (r["event"].created_at, r["event"].pk), reverse=True)[:20]
    context["retention_days"] = subject_config(subject)["retention.retrievalEventDays"]
    return render_page(request, subject, "dashboard/profile_history.html", context, page="profile")


class FactBulkForm(BulkForm):
    """Bulk actions on active facts: no tags, and no vote (the profile shows no score)."""

    action = forms.ChoiceField(choices=[("park", "Park"), ("unpark", "Unpark"), ("remove", "Remove")])


BULK_DONE = {"park": "Parked", "unpark": "Unparked", "remove": "Removed"}


@subject_view
@require_POST
def facts_bulk(request: HttpRequest, subject) -> HttpResponse:
    """One action on the selected active facts (`ids`): park, unpark, or remove — which asks
    first (`confirmed`, with the `count` it named; the history stays). Every id must be one of
    the subject's active facts, else 404 and nothing changes; all or nothing. Answers the
    profile's body again (htmx) or goes back to the page."""
    form = FactBulkForm(request.POST, noun="fact")
    status, confirm = 200, None
    active = ProfileFact.objects.filter(subject=subject, valid_to=None)  # a closed version is no selection
    selected = bulk_selection(request, form, active, noun="fact", asks="remove")
    if selected is None:
        status = 400
    else:
        action, facts, confirm = selected
        if confirm is None:
            actor = dashboard_actor(request)
            changed = 0
            with transaction.atomic():
                for fact in facts:
                    if action == "remove":
                        services.fact_remove(
                            subject=subject, key=fact.key, mode=fact.mode, scope=fact.scope, actor=actor
                        )
                        changed += 1
                    else:
                        changed += services.item_park(item=fact, parked=action == "park", actor=actor)
            messages.success(request, f"{BULK_DONE[action]} {changed} fact{'' if changed == 1 else 's'}.")
    if not is_htmx(request):
        if status == 200 and confirm is None:
            return redirect("dashboard:profile", subject_id=subject.pk)
        return _profile_page(request, subject, bulk_confirm=confirm, status=status)
    context = {
        "subject": subject,
        "facts": fact_list(subject=subject, include_parked=True),
        "add_form": FactAddForm(initial={"pinned": True}),
        "budget": _budget(subject),
        "bulk_confirm": confirm,
    }
    return render_fragment(request, "dashboard/partials/profile_body.html", context, status=status)
