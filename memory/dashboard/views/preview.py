"""Context preview: what the model would get for a message — both halves of the context, every
item with its score and reason, tokens per section.

It calls `memory.context.context_build` as the API's ContextApi does, with `record=False`: no
RetrievalEvent, no recall counted, no block marked as delivered to the conversation. A preview
leaves the statistics, eviction order and `unchanged` flags exactly as they were.
"""

from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from memory.context import context_build
from memory.dashboard.window import window_meter
from memory.models import Conversation
from memory.modes import mode_get, modes_all
from memory.selectors import items_named
from memoryweb.errors import MemorywebError

from .base import add_service_error, is_htmx, render_fragment, render_page, subject_config, subject_view

CONVERSATION_CHOICES = 50

# Why a section of the tail came out empty, in the person's words.
EMPTY_SECTION = {
    "profile": "No pinned fact, and no contextual fact whose keywords the message hits.",
    "recalled": "No note matches the words of the message.",
    "memory-index": "No further matching notes beyond those recalled in full.",
    "lessons": "No lesson matches the message.",
    "procedures": "No procedure matches the message.",
    "topics": "No conversation chosen, no topic it came back to yet, or topics are off for this "
    "app (topics.enabled) or mode.",
    "transcript": "No conversation chosen or no earlier turn, or the transcript is off for this app "
    "(recentTranscript.enabled, off by default) or mode.",
}
MAX_MESSAGE_CHARS = 20_000


class PreviewForm(forms.Form):
    message = forms.CharField(
        max_length=MAX_MESSAGE_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "e.g. Any restaurant tips for tonight?"}),
        help_text="Type it as the person would in the chat.",
    )
    conversation = forms.ModelChoiceField(
        queryset=Conversation.objects.none(),
        required=False,
        empty_label="No conversation (no history, no scope)",
        help_text="Within a conversation, short follow-ups are expanded from its last messages and "
        "notes of another scope stay out.",
        error_messages={"invalid_choice": "There is no such conversation in this memory."},
    )
    mode = forms.ChoiceField(
        required=False,
        label="Mode",
        help_text="Build in this assistant mode instead of the conversation's (see the Modes page).",
        error_messages={"invalid_choice": "There is no mode %(value)s; choose one of the known modes."},
    )
    k = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=50,
        label="Notes in full (k)",
        help_text="How many notes go into ### recalled; empty means the app's setting.",
    )

    def __init__(self, *args, subject, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["conversation"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = Conversation.objects.filter(subject=subject).order_by("-updated_at", "-id")
        field.label_from_instance = _conversation_label
        mode_field = self.fields["mode"]
        assert isinstance(mode_field, forms.ChoiceField)
        mode_field.choices = [("", "The conversation's mode (or the default)")] + [
            (m.name, f"{m.title} ({m.name})") for m in modes_all()
        ]

    def conversation_choices(self):
        """The latest conversations, for the select (the field accepts any of the subject's)."""
        field = self.fields["conversation"]
        assert isinstance(field, forms.ModelChoiceField)
        return field.queryset[:CONVERSATION_CHOICES]


def _conversation_label(conversation: Conversation) -> str:
    name = conversation.external_id or f"c:{conversation.pk}"
    extra = ", ".join(
        x
        for x in (
            conversation.mode and f"mode {conversation.mode}",
            conversation.scope and f"scope {conversation.scope}",
        )
        if x
    )
    return f"{name} ({extra})" if extra else name


def _item_href(subject, item_id: str, mode: str = "") -> str:
    """Where an item of the preview lives; the pages with vote buttons get the build's `?mode=`,
    so a vote given there is recorded in that mode (docs/feedback.md)."""
    kind, _, pk = item_id.partition(":")
    if not pk.isdigit():
        return ""
    in_mode = f"?{urlencode({'mode': mode})}" if mode else ""
    if kind == "n":
        return reverse("dashboard:note_detail", args=[subject.pk, int(pk)]) + in_mode
    if kind == "f":
        return reverse("dashboard:profile", args=[subject.pk])
    if kind == "l":
        return reverse("dashboard:lessons", args=[subject.pk]) + f"{in_mode}#lesson-{pk}"
    if kind == "p":
        return reverse("dashboard:procedures", args=[subject.pk]) + f"{in_mode}#procedure-{pk}"
    if kind == "e":
        return reverse("dashboard:evidence", args=[subject.pk]) + f"#evidence-{pk}"
    return ""


def _preview(subject, form: PreviewForm, *, window: str = "") -> dict:
    data = form.cleaned_data
    config = subject_config(subject)
    context = context_build(
        subject=subject,
        message=data["message"],
        config=config,
        conversation=data.get("conversation"),
        k=data.get("k"),
        record=False,
        mode=data.get("mode") or None,
    )
    result = context.as_dict(full=True)
    items = result["items"]
    names = items_named(subject_id=subject.pk, refs=[i["id"] for i in items])
    for item in items:
        item["href"] = _item_href(subject, item["id"], result["mode"])
        item["name"] = names.get(item["id"])
    blocks = []
    for block in result["blocks"]:
        cap = block["cap"] or 0
        blocks.append(
            {
                **block,
                "items": [i for i in items if i["section"] == block["name"]],
                "percent": min(100, round(100 * block["tokens"] / cap)) if cap else 0,
                "empty_why": EMPTY_SECTION.get(block["name"], "Nothing to say for this message."),
            }
        )
    prompt = "\n\n".join(part for part in (result["stable_prefix"], result["tail"]) if part)
    return {
        "result": result,
        "blocks": blocks,
        "prefix_block": blocks[0] if blocks else None,
        "tail_blocks": blocks[1:],
        "prompt": prompt,
        "tail_tokens": result["tokens"]["total"] - result["tokens"].get("stable_prefix", 0),
        "k": data.get("k") or mode_get(result["mode"]).apply(config)["recallInjection.k"],
        "meter": window_meter(result, config=config, choice=window),
    }


@subject_view
@require_GET
def preview(request: HttpRequest, subject) -> HttpResponse:
    """The form; with a message, the context it would get (the result alone for htmx)."""
    asked = "message" in request.GET
    form = PreviewForm(request.GET if asked else None, subject=subject)
    default_k = subject_config(subject)["recallInjection.k"]
    form.fields["k"].widget.attrs["placeholder"] = f"{default_k} (this app's setting)"
    context: dict = {"subject": subject, "form": form, "asked": asked}
    status = 200
    if asked:
        if form.is_valid():
            try:
                context.update(_preview(subject, form, window=request.GET.get("window", "")))
            except MemorywebError as error:  # e.g. an App whose modes.default names no mode
                add_service_error(form, error)
                status = 400
        else:
            status = 400
    if is_htmx(request):
        return render_fragment(request, "dashboard/partials/preview_result.html", context, status=status)
    return render_page(request, subject, "dashboard/preview.html", context, page="preview", status=status)


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "preview/", preview, name="preview"),
]
