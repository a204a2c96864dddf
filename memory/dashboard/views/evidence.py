"""Evidence: the subject's turns as memories (memory.models.Evidence), searched and filtered by
speaker, consent state, category and date, a page at a time; forget one.

The owner of a subject sees only their own (subject_view answers 404 for anyone else's);
staff see every subject's. Pending units wait in the consent queue; denied and forgotten ones
are listed without their text, which is gone.
"""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_POST

from memory.models import ConsentCategory, Evidence, EvidenceStatus, Role
from memory.services.evidence import evidence_forget

from .base import dashboard_actor, owned_or_404, render_page, subject_view

S = "s/<int:subject_id>/"
PAGE_SIZE = 25


class EvidenceSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, label="Search")
    role = forms.ChoiceField(
        required=False,
        label="Speaker",
        choices=[("", "Anyone"), (Role.USER, "user"), (Role.ASSISTANT, "assistant")],
    )
    status = forms.ChoiceField(required=False, choices=[("", "Any state"), *EvidenceStatus.choices])
    category = forms.ChoiceField(required=False)
    since = forms.DateField(required=False, help_text="YYYY-MM-DD")
    until = forms.DateField(required=False, help_text="YYYY-MM-DD")
    page = forms.IntegerField(required=False, min_value=1, max_value=10_000)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        categories = [(c.slug, c.name) for c in ConsentCategory.objects.order_by("name")]
        self.fields["category"].choices = [("", "Any category")] + categories

    def filtered(self, queryset):
        data = self.cleaned_data
        for word in data.get("q", "").split():
            queryset = queryset.filter(text__icontains=word)
        for name in ("role", "status", "category"):
            if data.get(name):
                queryset = queryset.filter(**{name: data[name]})
        if data.get("since"):
            queryset = queryset.filter(occurred_at__date__gte=data["since"])
        if data.get("until"):
            queryset = queryset.filter(occurred_at__date__lte=data["until"])
        return queryset


@subject_view
@require_GET
def evidence(request: HttpRequest, subject) -> HttpResponse:
    """The subject's evidence units, newest first, under the search and filters."""
    form = EvidenceSearchForm(request.GET)
    context: dict = {"subject": subject, "form": form, "page_obj": None}
    status = 400
    if form.is_valid():
        status = 200
        units = form.filtered(Evidence.objects.filter(subject=subject)).order_by("-occurred_at", "-id")
        page_obj = Paginator(units, PAGE_SIZE).get_page(form.cleaned_data.get("page") or 1)
        params = {k: v for k, v in request.GET.items() if k != "page" and v}
        context.update(page_obj=page_obj, query=urlencode(params))
    return render_page(request, subject, "dashboard/evidence.html", context, page="evidence", status=status)


@subject_view
@require_POST
def evidence_forget_view(request: HttpRequest, subject, evidence_id: int) -> HttpResponse:
    """Forget one unit (its text goes; reflecting on its message again does not bring it back)."""
    unit = owned_or_404(Evidence, subject, evidence_id)
    evidence_forget(evidence=unit, actor=dashboard_actor(request))
    messages.success(request, f"Forgot e:{unit.pk}.")
    return redirect(reverse("dashboard:evidence", args=[subject.pk]))


urlpatterns = [
    path(S + "evidence/", evidence, name="evidence"),
    path(S + "evidence/<int:evidence_id>/forget/", evidence_forget_view, name="evidence_forget"),
]
