"""Consent: the queue of sensitive memories waiting for the person's decision (approve / reject,
one click each), and the person's policy per sensitive category (allow / ask / deny).

Decisions and policies go through memory/services/consent.py, like the API's. The queue's
container (`#consent-queue`) reloads itself from `consent_queue` on the `mw:pending` event, so a
live update can refresh it with `htmx.trigger(document.body, "mw:pending")`; so does the count on
the sidebar's Consent link, from `consent_badge`.
"""

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_POST

from memory.dashboard.tags import NAV_BADGE_TEMPLATE
from memory.dashboard.writers import writer_origins
from memory.models import ConsentCategory, PendingMemory, PendingStatus, Policy
from memory.selectors import consent_policies, pending_queue
from memory.services.consent import consent_policy_set, pending_approve, pending_reject
from memoryweb.errors import MemorywebError

from .base import (
    dashboard_actor,
    is_htmx,
    pending_count,
    render_fragment,
    render_page,
    subject_config,
    subject_view,
)

QUEUE_LIMIT = 100

POLICY_HELP = {
    Policy.ALLOW: "store it",
    Policy.ASK: "ask me here first",
    Policy.DENY: "never store it",
}


class QueueForm(forms.Form):
    status = forms.ChoiceField(choices=PendingStatus.choices, required=False)
    # the app that wrote them: every pending item comes from the subject's App (its messages'
    # reflection or its API), so another name lists none
    app = forms.CharField(required=False, max_length=100)


class PolicyForm(forms.Form):
    category = forms.ModelChoiceField(
        queryset=ConsentCategory.objects.all(),
        to_field_name="slug",
        error_messages={"invalid_choice": "There is no such consent category."},
    )
    policy = forms.ChoiceField(choices=Policy.choices)


def _queue_context(subject, status: str, app: str = "") -> dict:
    items, counts = pending_queue(subject=subject, status=status, limit=QUEUE_LIMIT)
    if writer_origins(subject, app) == ():
        items = []
    return {
        "subject": subject,
        "status": status,
        "items": items,
        "tabs": [(value, label, counts[value]) for value, label in PendingStatus.choices],
        "status_count": counts[status],
        "more": counts[status] > len(items),
        "app": app,
    }


def _policy_row(subject, slug: str) -> dict:
    return next(row for row in consent_policies(subject=subject) if row["category"] == slug)


@subject_view
@require_GET
def consent(request: HttpRequest, subject) -> HttpResponse:
    form = QueueForm(request.GET)
    valid = form.is_valid()
    status = (form.cleaned_data.get("status") if valid else "") or PendingStatus.PENDING
    context = _queue_context(subject, status, form.cleaned_data.get("app", "") if valid else "")
    context.update(
        form=form,
        policies=consent_policies(subject=subject),
        policy_choices=_policy_choices(),
    )
    return render_page(
        request, subject, "dashboard/consent.html", context, page="consent", status=200 if valid else 400
    )


@subject_view
@require_GET
def consent_queue(request: HttpRequest, subject) -> HttpResponse:
    """The queue alone (`#consent-queue`), for htmx: the status tabs and live refreshes."""
    form = QueueForm(request.GET)
    if not is_htmx(request):
        return redirect(
            reverse("dashboard:consent", args=[subject.pk])
            + (f"?{request.GET.urlencode()}" if request.GET else "")
        )
    if not form.is_valid():
        context = {
            "subject": subject,
            "form": form,
            "status": PendingStatus.PENDING,
            "items": [],
        }
        return render_fragment(request, "dashboard/partials/consent_queue.html", context, status=400)
    status = form.cleaned_data["status"] or PendingStatus.PENDING
    context = _queue_context(subject, status, form.cleaned_data["app"])
    return render_fragment(request, "dashboard/partials/consent_queue.html", context)


@subject_view
@require_GET
def consent_badge(request: HttpRequest, subject) -> HttpResponse:
    """The sidebar's count of pending items alone, reloaded on the `mw:pending` event.

    A passive refresh, so unlike `render_fragment` it leaves queued messages for the page the
    person is on or goes to next."""
    html = render_to_string(NAV_BADGE_TEMPLATE, {"count": pending_count(subject)}, request=request)
    return HttpResponse(html)


def _decide(request: HttpRequest, subject, pending_id: int, decision: str) -> HttpResponse:
    pending = get_object_or_404(
        PendingMemory.objects.select_related("category", "source_message", "source_message__conversation"),
        subject=subject,
        pk=pending_id,
    )
    status = 200
    error = ""
    try:
        if decision == "approve":
            pending_approve(pending=pending, actor=dashboard_actor(request), config=subject_config(subject))
        else:
            pending_reject(pending=pending, actor=dashboard_actor(request))
    except MemorywebError as exc:
        status, error = 400, exc.message
        pending.refresh_from_db()
    else:
        pending.refresh_from_db()
        if decision == "approve":
            messages.success(
                request,
                f"Approved: the {pending.kind} is stored with its category ({pending.category.name}).",
            )
        else:
            messages.success(
                request, "Rejected: nothing was stored, and the same memory will not be asked again."
            )
    if not is_htmx(request):
        if error:
            messages.error(request, f"Could not {decision} it: {error}.")
        return redirect("dashboard:consent", subject_id=subject.pk)
    context = {"subject": subject, "p": pending, "error": error}
    return render_fragment(request, "dashboard/partials/consent_item.html", context, status=status)


@subject_view
@require_POST
def pending_approve_view(request: HttpRequest, subject, pending_id: int) -> HttpResponse:
    """Store the pending memory with its category (consent service)."""
    return _decide(request, subject, pending_id, "approve")


@subject_view
@require_POST
def pending_reject_view(request: HttpRequest, subject, pending_id: int) -> HttpResponse:
    """Drop the pending memory; the same content is not asked again (consent service)."""
    return _decide(request, subject, pending_id, "reject")


@subject_view
@require_POST
def consent_policy(request: HttpRequest, subject) -> HttpResponse:
    """Set the subject's policy for one category; answers that category's row (with the error
    naming the field when the input is refused)."""
    form = PolicyForm(request.POST)
    if form.is_valid():
        category = form.cleaned_data["category"]
        try:
            consent_policy_set(
                subject=subject,
                category=category.slug,
                policy=form.cleaned_data["policy"],
                actor=dashboard_actor(request),
            )
        except MemorywebError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            row = _policy_row(subject, category.slug)
            message = f"{row['name']}: {row['policy']} ({POLICY_HELP[Policy(row['policy'])]})."
            if not is_htmx(request):
                messages.success(request, message)
                return redirect(reverse("dashboard:consent", args=[subject.pk]) + f"#policy-{category.slug}")
            context = {"subject": subject, "row": row, "saved": True, "policy_choices": _policy_choices()}
            return render_fragment(request, "dashboard/partials/consent_policy.html", context)
    if not is_htmx(request):
        for field, errors in form.errors.items():
            messages.error(request, f"{field.capitalize()}: {' '.join(str(e) for e in errors)}")
        return redirect("dashboard:consent", subject_id=subject.pk)
    category = form.cleaned_data.get("category")
    context = {
        "subject": subject,
        "row": _policy_row(subject, category.slug) if category else None,
        "form": form,
        "policy_choices": _policy_choices(),
    }
    return render_fragment(request, "dashboard/partials/consent_policy.html", context, status=400)


def _policy_choices() -> list[tuple[str, str, str]]:
    return [(value, label, POLICY_HELP[Policy(value)]) for value, label in Policy.choices]


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "consent/", consent, name="consent"),
    path(S + "consent/queue/", consent_queue, name="consent_queue"),
    path(S + "consent/badge/", consent_badge, name="consent_badge"),
    path(S + "consent/pending/<int:pending_id>/approve/", pending_approve_view, name="pending_approve"),
    path(S + "consent/pending/<int:pending_id>/reject/", pending_reject_view, name="pending_reject"),
    path(S + "consent/policy/", consent_policy, name="consent_policy"),
]
