import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.config import validate_app_config
from memory.errors import InvalidInput
from memory.models import ApiKey, App, Subject
from memory.services.audit import Actor, audit_record


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


@transaction.atomic
def api_key_create(*, app: App, name: str = "", actor: Actor) -> tuple[ApiKey, str]:
    """Mint a key for `app`. Returns the row and the raw key, which is never stored or shown again."""
    prefix = secrets.token_hex(4)
    raw_key = f"mw_{prefix}_{secrets.token_urlsafe(32).replace('_', '-')}"
    key = ApiKey.objects.create(app=app, name=name, prefix=prefix, key_hash=ApiKey.hash_secret(raw_key))
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


@transaction.atomic
def subject_delete(*, subject: Subject, actor: Actor) -> None:
    """Delete the subject and everything held about it (facts, notes, conversations, events).
    The audit trail keeps one record of the deletion, without content."""
    from chat.models import Conversation
    from memory.models import Note

    app, external_id, subject_id = subject.app, subject.external_id, subject.pk
    # notes first: their versions, sources and links go with them, before the messages they cite
    Note.objects.filter(subject=subject).delete()
    Conversation.objects.filter(subject=subject).delete()
    subject.delete()
    audit_record(
        actor=actor,
        action="subject.deleted",
        app=app,
        object_kind="subject",
        object_id=subject_id,
        data={"external_id": external_id},
    )
