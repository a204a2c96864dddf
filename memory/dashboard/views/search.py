"""Search: one box across the subject's facts, notes, lessons and procedures, answered as the
person types (memory.search.memories: full-text with the last word as a prefix, and notes by
meaning when embeddings are on)."""

from django import forms
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET

from memory.search.memories import meaning_state, memory_search

from .base import is_htmx, render_fragment, render_page, subject_config, subject_view


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, strip=False, label="Search your memory")
    parked = forms.BooleanField(required=False, label="Include parked memories")


@subject_view
@require_GET
def search(request: HttpRequest, subject) -> HttpResponse:
    """The page, or (for htmx) just the results for what is typed so far."""
    form = SearchForm(request.GET)
    config = subject_config(subject)
    context: dict = {"subject": subject, "form": form, "results": None, "meaning": meaning_state(config)}
    status = 400
    if form.is_valid():
        status = 200
        query = form.cleaned_data["q"]
        if query.strip():
            results = memory_search(
                subject=subject, query=query, config=config, include_parked=form.cleaned_data["parked"]
            )
            context.update(results=results, meaning=results.meaning)
    if is_htmx(request):
        return render_fragment(request, "dashboard/partials/search_results.html", context, status=status)
    return render_page(request, subject, "dashboard/search.html", context, page="search", status=status)


urlpatterns = [path("s/<int:subject_id>/search/", search, name="search")]
