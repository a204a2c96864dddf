import re

from django.db import transaction
from django.utils import timezone

from memory.models import Origin, ProfileFact, Subject
from memory.modes import mode_get
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
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


def fact_active(subject: Subject, key: str, mode: str, scope: str):
    """The active version of `key` under these qualifiers (locked for the transaction where the
    database can), or None."""
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
    valid_from=None,
    actor: Actor,
) -> tuple[ProfileFact, bool]:
    """Set `key` to `value` for the subject, true from `valid_from`.

    Facts are bi-temporal: `valid_from`/`valid_to` say when the value held in the world,
    `created_at` when it was recorded. `valid_from` defaults to the source message's
    `occurred_at` (a fact learned from a message held from when it was said), else now.

    A different value (or pinning, or keywords) writes a new row and closes the active one at
    the new `valid_from` (`valid_to`, `superseded_by`), so history is never lost. A value that
    held before the active one began (a turn posted late) goes into the history where it
    belongs, between the versions around it, and the active fact stays. Setting the same thing
    again — or stating, for an earlier time, the value the history already holds then — writes
    no new version and counts a confirmation instead: safe to repeat. Returns (fact, changed).
    `mode` qualifies the fact to one assistant mode ("" = every mode): a new qualifier must be a
    known mode (InvalidInput naming `mode`); a fact already stored under a label since removed
    stays editable under it.
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

    if valid_from is None:
        valid_from = source_message.occurred_at if source_message is not None else timezone.now()

    active = fact_active(subject, key, mode, scope)
    if mode and active is None:
        mode_get(mode)
    if active is not None and valid_from < active.valid_from:
        # an earlier time: the version that held then is the one to compare with
        held = (
            ProfileFact.objects.filter(
                subject=subject, key=key, mode=mode, scope=scope, valid_from__lte=valid_from
            )
            .order_by("-valid_from", "-id")
            .first()
        )
        same = held is not None and (held.valid_to is None or held.valid_to > valid_from)
    else:
        held, same = active, active is not None
    if (
        held is not None
        and same
        and held.value == value
        and held.pinned == pinned
        and held.keywords == keywords
    ):
        ProfileFact.objects.filter(pk=held.pk).update(confirmations=held.confirmations + 1)
        held.confirmations += 1
        memory_changed(subject_id=subject.pk)  # confirmations count in the ranking
        audit_record(
            actor=actor, action="fact.confirmed", subject=subject, object_kind="fact", object_id=held.pk
        )
        return held, False

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
        "valid_from": valid_from,
    }
    fact = version_write(kind="fact", item=active, changes=changes, origin=origin, actor=actor)
    return fact, True


@transaction.atomic
def fact_remove(
    *, subject: Subject, key: str, mode: str = "", scope: str = "", valid_to=None, actor: Actor
) -> ProfileFact:
    """Close the active version of `key` at `valid_to` (default now; never before the version
    began) and announce it (`memory.changed`). History stays; removing again raises NotFound."""
    active = fact_active(subject, key, mode, scope)
    if active is None:
        raise NotFound(f"no active fact {key!r}", field="key")
    active.valid_to = max(valid_to or timezone.now(), active.valid_from)
    active.save(update_fields=["valid_to"])
    audit_record(actor=actor, action="fact.removed", subject=subject, object_kind="fact", object_id=active.pk)
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "memory.changed", {"kind": "fact", "id": active.pk})
    return active
