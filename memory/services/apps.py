import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory.config import validate_app_config
from memory.models import ApiKey, App, AuditEvent, Conversation, Note, Subject, SubjectAppPause
from memory.search import schema as search_schema
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memoryweb.errors import InvalidInput
from memoryweb.models import LiveEvent
from memoryweb.ratelimit import parse_rate


@transaction.atomic
def app_create(*, name: str, config: dict | None = None, actor: Actor) -> App:
    """Create an App. Not idempotent: a second App of the same name is refused."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise InvalidInput("name must be 1–100 characters", field="name")
    if App.objects.filter(name=name).exists():
        raise InvalidInput(f"an app named {name!r} already exists", field="name")
    validate_app_config(config or {})
    app = App.objects.create(name=name, config=config or {})
    audit_record(actor=actor, action="app.created", app=app, object_kind="app", object_id=app.pk)
    return app


def _rate_limit_clean(rate_limit: str) -> str:
    rate_limit = (rate_limit or "").strip()
    if rate_limit:
        try:
            parse_rate(rate_limit)
        except ValueError as exc:
            raise InvalidInput(str(exc), field="rate_limit") from None
    return rate_limit


@transaction.atomic
def api_key_create(*, app: App, name: str = "", rate_limit: str = "", actor: Actor) -> tuple[ApiKey, str]:
    """Mint a key for `app`. Returns the row and the raw key, which is never stored or shown again.
    `rate_limit` ("600/minute", "off"; blank: the installation's default) is validated."""
    rate_limit = _rate_limit_clean(rate_limit)
    prefix = secrets.token_hex(4)
    raw_key = f"mw_{prefix}_{secrets.token_urlsafe(32).replace('_', '-')}"
    key = ApiKey.objects.create(
        app=app, name=name, prefix=prefix, key_hash=ApiKey.hash_secret(raw_key), rate_limit=rate_limit
    )
    audit_record(actor=actor, action="api_key.created", app=app, object_kind="api_key", object_id=prefix)
    return key, raw_key


@transaction.atomic
def api_key_revoke(*, key: ApiKey, actor: Actor) -> ApiKey:
    """Revoke a key; revoking twice is a no-op."""
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(
            actor=actor, action="api_key.revoked", app=key.app, object_kind="api_key", object_id=key.prefix
        )
    return key


@transaction.atomic
def api_key_rate_limit_set(*, key: ApiKey, rate_limit: str, actor: Actor) -> ApiKey:
    """Set the key's own rate limit (blank: the installation's default). Safe to repeat."""
    rate_limit = _rate_limit_clean(rate_limit)
    if rate_limit != key.rate_limit:
        key.rate_limit = rate_limit
        key.save(update_fields=["rate_limit"])
        audit_record(
            actor=actor,
            action="api_key.rate_limit_set",
            app=key.app,
            object_kind="api_key",
            object_id=key.prefix,
            data={"rate_limit": rate_limit},
        )
    return key


@dataclass(frozen=True)
class Rotation:
    key: ApiKey
    raw_key: str  # shown once, never stored
    revoked: list[str]  # prefixes refused from now on
    expiring: list[str]  # prefixes that keep working until `expires_at`
    expires_at: datetime | None


@transaction.atomic
def api_key_rotate(*, app: App, name: str = "", overlap: timedelta | None = None, actor: Actor) -> Rotation:
    """Mint a new key for `app`; its keys in use keep working for `overlap` (default
    MEMORYWEB_API_KEY_OVERLAP seconds) and are refused after that; an overlap of 0 revokes them
    now. A key already expiring sooner keeps its earlier end. The new key inherits the rate
    limit of the newest old one. Each call mints a new key."""
    if overlap is None:
        overlap = timedelta(seconds=settings.MEMORYWEB_API_KEY_OVERLAP)
    if overlap < timedelta(0):
        raise InvalidInput("the overlap cannot be negative", field="overlap")
    now = timezone.now()
    ends = now + overlap if overlap else None
    revoked, expiring = [], []
    old_keys = list(ApiKey.objects.select_for_update().filter(app=app).usable(now).order_by("pk"))
    for key in old_keys:
        if ends is None:
            api_key_revoke(key=key, actor=actor)
            revoked.append(key.prefix)
            continue
        if key.expires_at is None or key.expires_at > ends:
            key.expires_at = ends
            key.save(update_fields=["expires_at"])
        expiring.append(key.prefix)
    rate_limit = old_keys[-1].rate_limit if old_keys else ""
    key, raw_key = api_key_create(app=app, name=name or "rotated", rate_limit=rate_limit, actor=actor)
    audit_record(
        actor=actor,
        action="api_key.rotated",
        app=app,
        object_kind="api_key",
        object_id=key.prefix,
        data={"revoked": revoked, "expiring": expiring, "expires_at": ends.isoformat() if ends else None},
    )
    return Rotation(key=key, raw_key=raw_key, revoked=revoked, expiring=expiring, expires_at=ends)


def _app_paused_set(app: App, paused: bool, actor: Actor) -> bool:
    # a conditional UPDATE: only a real change is written and audited, so repeating is a no-op
    changed = App.objects.filter(pk=app.pk, paused=not paused).update(
        paused=paused, updated_at=timezone.now()
    )
    app.paused = paused
    if changed:
        action = "app.paused" if paused else "app.resumed"
        audit_record(actor=actor, action=action, app=app, object_kind="app", object_id=app.pk)
    return bool(changed)


@transaction.atomic
def app_pause(*, app: App, actor: Actor) -> bool:
    """Pause the app: its keys get 403 "this app is paused" until it is resumed; nothing is
    deleted. Returns False when it was already paused (then nothing is written)."""
    return _app_paused_set(app, True, actor)


@transaction.atomic
def app_resume(*, app: App, actor: Actor) -> bool:
    """Resume a paused app. Returns False when it was not paused (then nothing is written)."""
    return _app_paused_set(app, False, actor)


@transaction.atomic
def subject_app_pause(*, subject: Subject, app: App, user, actor: Actor) -> bool:
    """The person pauses `app`'s access to `subject`'s memory: writes a SubjectAppPause (and an
    AuditEvent), after which that App's API calls for this subject answer 403
    `app_paused_for_subject`. Returns False when it was already paused (nothing written)."""
    if app.pk != subject.app_id:
        raise InvalidInput(f"{app.name} has no access to this subject", field="app")
    _, created = SubjectAppPause.objects.get_or_create(
        subject=subject, app=app, defaults={"paused_by": user if user and user.is_authenticated else None}
    )
    if created:
        audit_record(
            actor=actor,
            action="subject.app_paused",
            subject=subject,
            app=app,
            object_kind="app",
            object_id=app.pk,
        )
    return created


@transaction.atomic
def subject_app_resume(*, subject: Subject, app: App, actor: Actor) -> bool:
    """Lift the person's pause of `app` for `subject` (deletes the SubjectAppPause). Returns False
    when it was not paused (nothing written)."""
    deleted, _ = SubjectAppPause.objects.filter(subject=subject, app=app).delete()
    if deleted:
        audit_record(
            actor=actor,
            action="subject.app_resumed",
            subject=subject,
            app=app,
            object_kind="app",
            object_id=app.pk,
        )
    return bool(deleted)


@transaction.atomic
def app_config_set(*, app: App, config: dict, actor: Actor) -> App:
    """Replace the App's MEMORY overrides after validating every key."""
    validate_app_config(config)
    app.config = config
    app.save(update_fields=["config", "updated_at"])
    audit_record(
        actor=actor, action="app.config_set", app=app, object_kind="app", object_id=app.pk, data=config
    )
    return app


def subject_get_or_create(*, app: App, external_id: str) -> Subject:
    """The App's subject with this external id, created on first use. Safe to repeat."""
    external_id = (external_id or "").strip()
    if not external_id or len(external_id) > 200 or "/" in external_id:
        raise InvalidInput("subject must be 1–200 characters without '/'", field="subject")
    subject = Subject.objects.filter(app=app, external_id=external_id).first()
    if subject is not None:
        return subject
    try:
        with transaction.atomic():
            return Subject.objects.create(app=app, external_id=external_id)
    except IntegrityError:  # created by a concurrent request
        return Subject.objects.get(app=app, external_id=external_id)


_UNCHANGED: Any = object()


@transaction.atomic
def subject_update(
    *, subject: Subject, display_name: str = _UNCHANGED, owner: Any = _UNCHANGED, actor: Actor
) -> Subject:
    """Set the subject's display name and/or its owner (the dashboard login that may curate
    this memory; None removes it). Writes and audits only what changed: safe to repeat."""
    changes: dict[str, object] = {}
    if display_name is not _UNCHANGED:
        display_name = (display_name or "").strip()
        if len(display_name) > 200:
            raise InvalidInput("display_name must be at most 200 characters", field="display_name")
        if display_name != subject.display_name:
            subject.display_name = display_name
            changes["display_name"] = display_name
    if owner is not _UNCHANGED:
        owner_id = owner.pk if owner is not None else None
        if owner_id != subject.owner_id:
            subject.owner = owner
            changes["owner"] = owner.get_username() if owner is not None else None
    if changes:
        subject.save(update_fields=list(changes))
        audit_record(
            actor=actor,
            action="subject.updated",
            subject=subject,
            object_kind="subject",
            object_id=subject.pk,
            data=changes,
        )
    return subject


@transaction.atomic
def subject_delete(*, subject: Subject, actor: Actor) -> None:
    """Delete the subject and everything held about it (facts, notes, conversations, events,
    vectors, its audit trail, its live events) and purge the full-text indexes of its terms.
    The audit trail keeps one record of the deletion, without content.
    tests/memory/test_subject_delete_scan.py reads every table afterwards."""

    app, external_id, subject_id = subject.app, subject.external_id, subject.pk
    # notes first: their versions, sources and links go with them, before the messages they cite
    memory_changed(subject_id=subject_id)  # a concurrent build must not serve a cached context
    Note.objects.filter(subject=subject).delete()
    Conversation.objects.filter(subject=subject).delete()
    # the audit rows of the subject name its items and carry what they said (set null otherwise)
    AuditEvent.objects.filter(subject=subject).delete()
    LiveEvent.objects.filter(subject_id=subject_id).delete()
    subject.delete()
    search_schema.purge(connection)
    audit_record(
        actor=actor,
        action="subject.deleted",
        app=app,
        object_kind="subject",
        object_id=subject_id,
        data={"external_id": external_id},
    )
