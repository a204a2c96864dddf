"""Operators' keys for /api/v1/admin/ (memory.models.AdminKey): minted and revoked here, audited."""

import secrets

from django.db import transaction
from django.utils import timezone

from memory.models import AdminKey
from memory.services.audit import Actor, audit_record
from memoryweb.errors import InvalidInput


@transaction.atomic
def admin_key_create(*, name: str = "", actor: Actor) -> tuple[AdminKey, str]:
    """Mint an admin key. Returns the row and the raw key `mwa_<prefix>_<secret>`, which is
    never stored or shown again."""
    name = (name or "").strip()
    if len(name) > 100:
        raise InvalidInput("name must be at most 100 characters", field="name")
    prefix = secrets.token_hex(4)
    raw_key = f"mwa_{prefix}_{secrets.token_urlsafe(32).replace('_', '-')}"
    key = AdminKey.objects.create(name=name, prefix=prefix, key_hash=AdminKey.hash_secret(raw_key))
    audit_record(actor=actor, action="admin_key.created", object_kind="admin_key", object_id=prefix)
    return key, raw_key


@transaction.atomic
def admin_key_revoke(*, key: AdminKey, actor: Actor) -> AdminKey:
    """Revoke an admin key; revoking twice is a no-op."""
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(actor=actor, action="admin_key.revoked", object_kind="admin_key", object_id=key.prefix)
    return key
