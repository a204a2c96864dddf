"""Template tags for the dashboard (`{% load dashboard %}`; registered in settings.TEMPLATES)."""

from django import template
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()


@register.simple_tag(takes_context=True)
def nav_link(context, url_name: str, label: str, badge: int = 0):
    """A sidebar link to `url_name` for the current subject, marked when it is the current page.

    Renders nothing when the URL name does not resolve (a page that is not installed), so the
    nav can list every page while they are being built.
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
    badge_html = format_html(' <span class="badge badge-warn">{}</span>', badge) if badge else ""
    return format_html(
        '<a class="nav-link{}" href="{}" data-page="{}"{}>{}{}</a>',
        " is-active" if current else "",
        href,
        key,
        mark_safe(' aria-current="page"') if current else "",
        label,
        badge_html,
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
