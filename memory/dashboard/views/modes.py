"""Modes: every known assistant mode (built in and from MEMORYWEB_MODES_DIR), what it does in
plain sentences and a compact table of its policy. Reference only: no subject's data, so any
logged-in user may read it."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET

from memory.modes import SECTION_KEYS, Mode, modes_all
from memory.modes.summary import CATEGORY_NAMES, mode_summary

from .base import render_page

SCOPE_LABELS = {"same": "own scope", "unscoped": "unscoped", "other": "other projects"}
RETRIEVAL_LABELS = {
    "k": "in full (k)",
    "candidates": "candidates",
    "indexLimit": "index pointers",
    "minApplicability": "min. applicability",
}


def _policy(mode: Mode) -> dict:
    """One mode's policy as the table shows it; a section or parameter the manifest leaves out
    keeps the App's configured value ("app setting")."""
    return {
        "scopes": [SCOPE_LABELS[s] for s in mode.scopes],
        "privacy": [CATEGORY_NAMES.get(c, c) for c in sorted(mode.allowed_categories)],
        "sections": [(name, mode.sections.get(name)) for name in SECTION_KEYS],
        "retrieval": [(label, mode.retrieval.get(key)) for key, label in RETRIEVAL_LABELS.items()],
        "weights": sorted((mode.retrieval.get("weights") or {}).items()),
        "renders": [
            (part, bool(mode.renders.get(part))) for part in ("contract", "state", "topics", "transcript")
        ],
    }


@login_required
@require_GET
def modes(request: HttpRequest) -> HttpResponse:
    rows = [{"mode": m, "summary": mode_summary(m), "policy": _policy(m)} for m in modes_all()]
    return render_page(request, None, "dashboard/modes.html", {"rows": rows}, page="modes")


urlpatterns = [
    path("modes/", modes, name="modes"),
]
