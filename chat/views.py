"""The chat playground page (dashboard, `/s/<subject_id>/playground/`).

With JavaScript the page talks over the websocket `/ws/s/<subject_id>/playground/` (chat/
consumers.py) and the reply streams in; without it the form posts to `playground_send`, which
runs the same turn (chat/playground.py) and shows the page again with the reply and the
context that was sent. `urlpatterns` joins the dashboard namespace (memoryweb/urls.py).
"""

from django import forms
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from chat.playground import MAX_MESSAGE_CHARS, NO_MODEL, TurnPrompt, playground_messages, playground_turn
from memory.config import MemoryConfig
from memory.dashboard.views.base import (
    add_service_error,
    dashboard_actor,
    render_page,
    subject_config,
    subject_view,
)
from memory.dashboard.window import window_meter
from memory.models import Subject
from memory.selectors import items_named
from memoryweb.errors import MemorywebError
from memoryweb.llm.spec import component_spec


class PlaygroundForm(forms.Form):
    message = forms.CharField(
        max_length=MAX_MESSAGE_CHARS,
        widget=forms.Textarea(
            attrs={"rows": 3, "placeholder": "Say something the assistant should remember…"}
        ),
    )


def context_panel(prompt: TurnPrompt, *, subject: Subject, config: MemoryConfig) -> str:
    """The "what the model was sent" panel, for the page and for the websocket: the context
    against the chat model's window, and its items by name."""
    names = items_named(subject_id=subject.pk, refs=[i["id"] for i in prompt.context["items"]])
    items = [{**item, "name": names.get(item["id"])} for item in prompt.context["items"]]
    meter = window_meter(prompt.context, config=config) if prompt.context["enabled"] else None
    return render_to_string(
        "dashboard/playground_context.html", {"prompt": prompt, "items": items, "meter": meter}
    )


def _page(request, subject, *, form=None, result=None, status=200) -> HttpResponse:
    config = subject_config(subject)
    spec = component_spec("chat", config)
    return render_page(
        request,
        subject,
        "dashboard/playground.html",
        {
            "form": form or PlaygroundForm(),
            "model": str(spec),
            "model_configured": not spec.is_none,
            "transcript": playground_messages(subject=subject),
            "result": result,
            "context_html": context_panel(result.prompt, subject=subject, config=config) if result else "",
            "notice": NO_MODEL,
        },
        page="playground",
        status=status,
    )


@subject_view
@require_GET
def playground(request: HttpRequest, subject) -> HttpResponse:
    return _page(request, subject)


@subject_view
@require_POST
def playground_send(request: HttpRequest, subject) -> HttpResponse:
    """One turn without JavaScript: the reply arrives whole instead of streamed."""
    form = PlaygroundForm(request.POST)
    if not form.is_valid():
        return _page(request, subject, form=form, status=400)
    try:
        result = playground_turn(
            subject=subject,
            text=form.cleaned_data["message"],
            actor=dashboard_actor(request),
            config=subject_config(subject),
        )
    except MemorywebError as exc:
        add_service_error(form, exc)
        return _page(request, subject, form=form, status=400)
    return _page(request, subject, result=result)


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "playground/", playground, name="playground"),
    path(S + "playground/send/", playground_send, name="playground_send"),
]
