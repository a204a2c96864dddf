"""The link graph: the subject's notes and their typed links, drawn with cytoscape
(static/js/graph.js). Big subjects are capped at the most-linked notes, and the page says so;
centring on a note shows its neighbourhood instead.

The page embeds the first drawing's data; the JSON endpoint serves every later one (another
size, archived notes, another centre) without reloading the page.
"""

from django import forms
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from memory.dashboard.tags import item_gist
from memory.models import LinkKind, Note
from memory.selectors import GRAPH_MAX_NODES, note_graph

from .base import owned_or_404, render_page, subject_view

DEFAULT_LIMIT = 150
LIMIT_CHOICES = [50, 150, 300, GRAPH_MAX_NODES]
LABEL_CHARS = 40
CONTENT_CHARS = 280

KIND_HELP = {
    LinkKind.RELATED: "similar enough, nothing more specific",
    LinkKind.ELABORATES: "adds detail to the other note",
    LinkKind.CONTRADICTS: "corrects or reverses the other note",
    LinkKind.CAUSES: "cause and effect",
    LinkKind.SAME_TOPIC: "shares its tags and most of its words",
}


class GraphForm(forms.Form):
    limit = forms.IntegerField(required=False, min_value=10, max_value=GRAPH_MAX_NODES, label="Notes")
    focus = forms.IntegerField(required=False, min_value=1, label="Centre on note")
    depth = forms.IntegerField(required=False, min_value=1, max_value=3, label="Hops")
    archived = forms.BooleanField(required=False, label="Include archived notes")


def _form_errors(form: forms.Form) -> dict:
    field, errors = next(iter(form.errors.items()))
    return {
        "error": {
            "code": "invalid",
            "field": field,
            "message": f"{field}: {' '.join(str(e) for e in errors)}",
        }
    }


def _graph(request: HttpRequest, subject, form: GraphForm) -> dict:
    """The drawing's data, as the JSON endpoint answers it. 404 for a note that is not the subject's."""
    data = form.cleaned_data
    focus = owned_or_404(Note, subject, data["focus"]) if data.get("focus") else None
    # an archived note's links lead to archived notes (its cluster): show them when centred on one
    archived = bool(data.get("archived")) or (focus is not None and focus.archived_at is not None)
    graph = note_graph(
        subject=subject,
        limit=data.get("limit") or DEFAULT_LIMIT,
        focus=focus,
        depth=data.get("depth") or 2,
        include_archived=archived,
    )
    nodes = [
        {
            "id": node["id"],
            "label": item_gist(node["content"], LABEL_CHARS),
            "content": item_gist(node["content"], CONTENT_CHARS),
            "tags": node["tags"],
            "degree": node["degree"],
            "archived": node["archived"],
            "vote_score": node["vote_score"],
            "focus": node["focus"],
            "url": reverse("dashboard:note_detail", args=[subject.pk, node["id"]]),
        }
        for node in graph["nodes"]
    ]
    edges = [
        {
            "id": edge["id"],
            "source": edge["src_id"],
            "target": edge["dst_id"],
            "kind": edge["kind"],
            "weight": round(edge["weight"], 3),
            "origin": edge["origin"],
        }
        for edge in graph["edges"]
    ]
    summary = {
        "shown": len(nodes),
        "shown_edges": len(edges),
        "total_notes": graph["total_notes"],
        "linked_notes": graph["linked_notes"],
        "total_edges": graph["total_edges"],
        "capped": graph["capped"],
        "limit": graph["limit"],
        "focus": focus.pk if focus else None,
        "archived": archived,
    }
    summary["text"] = _summary_text(summary)
    return {"nodes": nodes, "edges": edges, "summary": summary}


def _summary_text(s: dict) -> str:
    if s["focus"]:
        text = (
            f"Note n:{s['focus']} and the notes linked to it: {s['shown']} notes, {s['shown_edges']} links."
        )
        if s["capped"]:
            text += f" Capped at {s['limit']} notes, nearest first."
        return text
    if not s["total_notes"]:
        return "No notes yet."
    text = f"{s['total_notes']} notes, {s['linked_notes']} of them linked, {s['total_edges']} links."
    if s["capped"]:
        text += (
            f" Showing the {s['shown']} most-linked notes"
            f"{' (topped up with the newest unlinked ones)' if s['shown'] > s['linked_notes'] else ''}"
            " and the links among them; centre on a note to explore the rest."
        )
    return text


@subject_view
@require_GET
def graph(request: HttpRequest, subject) -> HttpResponse:
    form = GraphForm(request.GET)
    context: dict = {
        "subject": subject,
        "form": form,
        "limit_choices": LIMIT_CHOICES,
        "kinds": [(kind.value, KIND_HELP[kind]) for kind in LinkKind],
        "data_url": reverse("dashboard:graph_data", args=[subject.pk]),
    }
    if not form.is_valid():
        return render_page(request, subject, "dashboard/graph.html", context, page="graph", status=400)
    data = _graph(request, subject, form)
    hubs = sorted(data["nodes"], key=lambda n: (-n["degree"], -n["id"]))[:15]
    context.update(
        data=data,
        summary=data["summary"],
        hubs=[hub for hub in hubs if hub["degree"]],
        limit=form.cleaned_data.get("limit") or DEFAULT_LIMIT,
    )
    return render_page(request, subject, "dashboard/graph.html", context, page="graph")


@subject_view
@require_GET
def graph_data(request: HttpRequest, subject) -> JsonResponse:
    """The graph as JSON: {nodes, edges, summary}. Bad parameters → 400 naming the field."""
    form = GraphForm(request.GET)
    if not form.is_valid():
        return JsonResponse(_form_errors(form), status=400)
    return JsonResponse(_graph(request, subject, form))


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "graph/", graph, name="graph"),
    path(S + "graph/data.json", graph_data, name="graph_data"),
]
