"""Your data: the person downloads everything memoryweb holds about them (the export document,
docs/export.md) and can delete it all, after typing the subject's id to confirm.

The download is memory.selectors.subject_export, the same document as the API's GET
/subjects/{subject}; the deletion is memory.services.subject_delete, as the API's DELETE.
"""

import json

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from memory.selectors import subject_export
from memory.services import subject_delete

from .base import dashboard_actor, is_htmx, render_page, subject_view


class DeleteForm(forms.Form):
    confirm = forms.CharField(max_length=200, strip=True)


def _page(request, subject, form: DeleteForm, *, status: int = 200) -> HttpResponse:
    return render_page(
        request, subject, "dashboard/subject_data.html", {"form": form}, page="subject_data", status=status
    )


@subject_view
@require_GET
def subject_data(request: HttpRequest, subject) -> HttpResponse:
    return _page(request, subject, DeleteForm())


@subject_view
@require_GET
def subject_data_export(request: HttpRequest, subject) -> HttpResponse:
    document = subject_export(subject=subject)
    name = slugify(subject.external_id) or f"subject-{subject.pk}"
    response = HttpResponse(
        json.dumps(document, indent=2, ensure_ascii=False), content_type="application/json; charset=utf-8"
    )
    stamp = timezone.now().strftime("%Y%m%d")
    response["Content-Disposition"] = f'attachment; filename="memoryweb-{name}-{stamp}.json"'
    return response


@subject_view
@require_POST
def subject_data_delete(request: HttpRequest, subject) -> HttpResponse:
    form = DeleteForm(request.POST)
    if not form.is_valid() or form.cleaned_data["confirm"] != subject.external_id:
        form.add_error(None, f"Type {subject.external_id} exactly to delete this memory.")
        return _page(request, subject, form, status=400)
    label = subject.display_name or subject.external_id
    subject_delete(subject=subject, actor=dashboard_actor(request))
    messages.success(request, f"Everything memoryweb held about {label} is deleted.")
    home = reverse("dashboard:home")
    if is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = home
        return response
    return redirect(home)


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "data/", subject_data, name="subject_data"),
    path(S + "data/export/", subject_data_export, name="subject_data_export"),
    path(S + "data/delete/", subject_data_delete, name="subject_data_delete"),
]
