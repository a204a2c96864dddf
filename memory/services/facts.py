import re

from django.db import transaction
from django.utils import timezone

from memory.models import Origin, ProfileFact, Subject
from memory.services.audit import Actor, audit_record
from memory.services.scrub import scrub
from memory.services.versions import version_write
from memoryweb.errors import InvalidInput, NotFound
from memoryweb.live import notify

KEY_RE = re.compile(r"^[\w][\w .:-]{0,99}$", re.UNICODE)
KEY_MESSAGE = "key must be 1–100 characters: letters, digits, spaces and . : - _"
MAX_VALUE_CHARS = 2000
MAX_KEYWORDS = 16


def _clean_keywords(keywords) -> list[str]:
    if keywords is None:
        return []
    if not isinstance(keywords, (list, tuple)) or not all(isinstance(k, str) for k in keywords):
        raise InvalidInput("keywords must be a list of strings", field="keywords")
    cleaned = []
    for keyword in keywords:
        keyword = " ".join(keyword.lower().split())
        if not keyword:
            continue
        if len(keyword) > 60:
            raise InvalidInput("each keyword must be at most 60 characters", field="keywords")
        if keyword not in cleaned:
            cleaned.append(keyword)
    if len(cleaned) > MAX_KEYWORDS:
        raise InvalidInput(f"at most {MAX_KEYWORDS} keywords", field="keywords")
    return cleaned


def _clean_key(key: str) -> str:
    key = (key or "").strip()
    if not KEY_RE.match(key):
        raise InvalidInput(KEY_MESSAGE, field="key")
    return key


def _active(subject: Subject, key: str, mode: str, scope: str):
    queryset = ProfileFact.objects.filter(subject=subject, key=key, mode=mode, scope=scope, valid_to=None)
    if transaction.get_connection().features.has_select_for_update:
        queryset = queryset.select_for_update()
    return queryset.first()


@transaction.atomic
def fact_set(
    *,
    subject: Subject,
    key: str,
    value: str,
    pinned: bool = True,
    keywords=None,
    mode: str = "",
    scope: str = "",
    confidence: float = 1.0,
    category: str = "",
    origin: str = Origin.API,
    source_message=None,
    actor: Actor,
) -> tuple[ProfileFact, bool]:
    """Set `key` to `value` for the subject.

    A different value (or pinning, or keywords) writes a new row and closes the active one
    (`valid_to`, `superseded_by`), so history is never lost. Setting the same thing again writes
    no new version and counts a confirmation instead: safe to repeat. Returns (fact, changed).
    A new version is announced to open dashboard pages (`memory.changed`) after commit.
    """
    key = _clean_key(key)
    value = (value or "").strip() if isinstance(value, str) else value
    if not isinstance(value, str) or not value:
        raise InvalidInput("value must be a non-empty string", field="value")
    if len(value) > MAX_VALUE_CHARS:
        raise InvalidInput(f"value must be at most {MAX_VALUE_CHARS} characters", field="value")
    value = scrub(value, where="fact")
    keywords = _clean_keywords(keywords)
    if not pinned and not keywords:
        raise InvalidInput("a contextual (unpinned) fact needs at least one keyword", field="keywords")
    if not 0.0 <= float(confidence) <= 1.0:
        raise InvalidInput("confidence must be between 0 and 1", field="confidence")

    active = _active(subject, key, mode, scope)
    if active and active.value == value and active.pinned == pinned and active.keywords == keywords:
        ProfileFact.objects.filter(pk=active.pk).update(confirmations=active.confirmations + 1)
        active.confirmations += 1
        audit_record(
            actor=actor, action="fact.confirmed", subject=subject, object_kind="fact", object_id=active.pk
        )
        return active, False

    changes = {
        "subject": subject,
        "key": key,
        "value": value,
        "pinned": pinned,
        "keywords": keywords,
        "mode": mode,
        "scope": scope,
        "confidence": confidence,
        "category": category,
        "source_message": source_message,
    }
    fact = version_write(kind="fact", item=active, changes=changes, origin=origin, actor=actor)
    return fact, True


@transaction.atomic
def fact_remove(*, subject: Subject, key: str, mode: str = "", scope: str = "", actor: Actor) -> ProfileFact:
    """Close the active version of `key` and announce it (`memory.changed`). History stays;
    removing again raises NotFound."""
    active = _active(subject, key, mode, scope)
    if active is None:
        raise NotFound(f"no active fact {key!r}", field="key")
    active.valid_to = timezone.now()
    active.save(update_fields=["valid_to"])
    audit_record(actor=actor, action="fact.removed", subject=subject, object_kind="fact", object_id=active.pk)
    notify(subject.pk, "memory.changed", {"kind": "fact", "id": active.pk})
    return active
