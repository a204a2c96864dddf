"""Template tags for the dashboard (`{% load dashboard %}`; registered in settings.TEMPLATES)."""

from datetime import date, datetime, timedelta

from django import template
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince

from memory.search.lexical import PREFIX, term_word
from memory.services import Actor, person_vote
from memory.text import STOPWORDS, TOKEN_RE, stem

register = template.Library()

NBSP = "\xa0"
NAV_BADGE_TEMPLATE = "dashboard/partials/nav_badge.html"


@register.simple_tag(takes_context=True)
def nav_link(context, url_name: str, label: str, badge: int = 0, badge_src: str = "", badge_on: str = ""):
    """A sidebar link to `url_name` for the current subject, marked when it is the current page.

    Renders nothing when the URL name does not resolve (a page that is not installed), so the
    nav can list every page while they are being built. With `badge_src`, the URL name of a
    fragment that answers the badge alone, and `badge_on`, a live event ("mw:pending"), the
    badge reloads itself when that event fires.
    """
    subject = context.get("subject")
    if subject is None:
        return ""
    try:
        href = reverse(url_name, kwargs={"subject_id": subject.pk})
    except NoReverseMatch:
        return ""
    key = url_name.split(":")[-1]
    current = context.get("page") == key
    badge_html = mark_safe(render_to_string(NAV_BADGE_TEMPLATE, {"count": badge}).strip())
    if badge_src and badge_on:
        badge_html = format_html(
            '<span class="nav-badge" hx-get="{}" hx-trigger="{} from:body" hx-swap="innerHTML">{}</span>',
            reverse(badge_src, kwargs={"subject_id": subject.pk}),
            badge_on,
            badge_html,
        )
    return format_html(
        '<a class="nav-link{}" href="{}" data-page="{}"{}>{}{}</a>',
        " is-active" if current else "",
        href,
        key,
        mark_safe(' aria-current="page"') if current else "",
        label,
        format_html(" {}", badge_html) if badge_html else "",
    )


@register.simple_tag
def url_if(url_name: str, *args, **kwargs) -> str:
    """`{% url_if "dashboard:lessons" subject_id=s.pk as href %}`: the URL, or "" when the page
    is not installed (for cross-page links that must not break the page)."""
    try:
        return reverse(url_name, args=args or None, kwargs=kwargs or None)
    except NoReverseMatch:
        return ""


@register.filter
def item_gist(text: str, length: int = 120) -> str:
    """The first `length` characters of a memory's text on one line, with an ellipsis."""
    text = " ".join((text or "").split())
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"


SNIPPET = 240


@register.filter
def highlight(text: str, terms: list[str]) -> str:
    """`text` escaped, on one line, cut to about SNIPPET characters around its first matched
    word, with every word the search matched in <mark>: the term itself, a word of the same
    stem (memory.text.stem: "deployed" for "deploys"; stop words never), and for a prefix term
    (the word still being typed, memory.search.lexical.PREFIX) every word it begins. Only
    `<mark>` is markup: the memory's own text is escaped."""
    text = " ".join((text or "").split())
    whole = {term_word(t) for t in terms if not t.endswith(PREFIX)}
    stems_ = {stem(w) for w in whole}
    prefixes = tuple(term_word(t) for t in terms if t.endswith(PREFIX))

    def matches(word: str) -> bool:
        word = word.lower()
        if word in whole or word.startswith(prefixes):
            return True
        return word not in STOPWORDS and stem(word) in stems_

    spans = [m.span() for m in TOKEN_RE.finditer(text) if matches(m.group())]
    start, end = 0, len(text)
    if len(text) > SNIPPET:
        if spans and spans[0][1] > SNIPPET - 40:  # the first match would fall off the end
            start = text.rfind(" ", 0, max(spans[0][0] - 60, 0)) + 1
        end = text.rfind(" ", start, start + SNIPPET)
        end = end if end > start else start + SNIPPET
    parts, at = [], start
    for left, right in spans:
        if left < start or right > end:
            continue
        parts += [escape(text[at:left]), format_html("<mark>{}</mark>", text[left:right])]
        at = right
    parts.append(escape(text[at:end]))
    html = "".join(parts)
    return mark_safe(("…" if start else "") + html + ("…" if end < len(text) else ""))


@register.filter
def relevance(value: float) -> str:
    """A search hit's relevance with two decimals, never "0.00" for a hit: below 0.01 it reads
    "<0.01"."""
    return f"{value:.2f}" if value >= 0.01 else "<0.01"


@register.filter
def ago(when: date | None) -> str:
    """When something happened, relative to now: "just now" within the last minute (and for a
    time a little in the future, as another clock may put it), else "3 minutes ago".

    Django's `timesince` alone says "0 minutes" for the first minute.
    """
    if not when:
        return ""
    if not isinstance(when, datetime):
        return f"{timesince(when)} ago"
    now = timezone.now() if timezone.is_aware(when) else datetime.now()
    if (now - when).total_seconds() < 60:
        return "just now"
    return f"{timesince(when, now)} ago"


@register.filter
def duration(value: timedelta | float | None) -> str:
    """How long something took, `value` in seconds or a timedelta: "340 ms", "4.2 s", "42 s",
    "3 min 12 s", "2 h 5 min". Short jobs are the common case, so they keep their precision.
    A number and its unit are joined by a no-break space, as in Django's `timesince`."""
    if value is None or value == "":
        return ""
    seconds = max(value.total_seconds() if isinstance(value, timedelta) else float(value), 0.0)
    if seconds < 1:
        millis = int(seconds * 1000)
        return f"{millis}{NBSP}ms" if millis else f"under 1{NBSP}ms"
    if seconds < 10:
        return f"{int(seconds * 10) / 10:.1f}{NBSP}s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}{NBSP}s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes}{NBSP}min {rest}{NBSP}s" if rest else f"{minutes}{NBSP}min"
    hours, rest = divmod(whole, 3600)
    minutes = rest // 60
    return f"{hours}{NBSP}h {minutes}{NBSP}min" if minutes else f"{hours}{NBSP}h"


@register.filter
def took(started: datetime | None, finished: datetime | None) -> str:
    """`{{ run.started_at|took:run.finished_at }}`: the duration between two times ("" while
    either is missing)."""
    if not started or not finished:
        return ""
    return duration(finished - started)


@register.filter
def key_label(key: object) -> str:
    """A stats or profile key as a label: "linked_candidates" → "Linked candidates",
    "job_title" → "Job title", "preference.dark mode" → "Preference: dark mode"."""
    head, _, rest = str(key).replace("_", " ").strip().partition(".")
    label = head[:1].upper() + head[1:]
    return f"{label}: {rest}" if rest else label


@register.simple_tag(takes_context=True)
def my_vote(context, item_kind: str, item) -> int:
    """The signed-in person's own vote on the item (1 up, -1 down, 0 none), for the vote
    buttons' aria-pressed."""
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return 0
    return person_vote(item_kind=item_kind, item_id=item.pk, actor=Actor.user(request.user))


@register.filter
def writer(origin: str, subject) -> str:
    """`{{ note.origin|writer:subject }}`: the app (or "you (dashboard)", "memoryweb") that
    wrote an item of this subject (memory/dashboard/writers.py)."""
    from memory.dashboard.writers import writer_label

    return writer_label(subject, origin)
