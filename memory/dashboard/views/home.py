"""The landing page (pick a subject) and the subject switcher."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

from memory.dashboard.views.base import render_page, subject_for, subject_view, subjects_for


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """One subject: straight to its overview. Several (or staff): the list. None: what to do."""
    query = request.GET.get("q", "").strip()
    subjects = subjects_for(request.user)
    if not request.user.is_staff and not query and subjects.count() == 1:
        return redirect("dashboard:overview", subject_id=subjects.get().pk)
    if query:
        subjects = subjects.filter(external_id__icontains=query) | subjects.filter(
            display_name__icontains=query
        )
    return render_page(
        request,
        None,
        "dashboard/home.html",
        {"subjects": subjects[:200], "total": subjects.count(), "query": query},
        page="home",
    )


@login_required
@require_GET
def switch(request: HttpRequest) -> HttpResponse:
    """The switcher's target: the same page for another subject (the overview if that page
    does not exist for subjects). The subject is checked like everywhere else (404)."""
    try:
        subject_id = int(request.GET.get("subject", ""))
    except ValueError:
        return redirect("dashboard:home")
    subject = subject_for(request, subject_id)
    page = request.GET.get("page", "overview")
    try:
        return redirect(reverse(f"dashboard:{page}", kwargs={"subject_id": subject.pk}))
    except NoReverseMatch:
        return redirect("dashboard:overview", subject_id=subject.pk)


@subject_view
@require_GET
def subject_home(request: HttpRequest, subject) -> HttpResponse:
    """`/s/<id>/`: the subject's overview."""
    return redirect("dashboard:overview", subject_id=subject.pk)
