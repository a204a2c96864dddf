from dataclasses import dataclass

from memory.models import ActorKind, App, AuditEvent, Subject


@dataclass(frozen=True)
class Actor:
    """Who is writing: an API key, a dashboard user, a task or the system itself."""

    kind: str
    id: str = ""
    app_id: int | None = None

    @classmethod
    def api_key(cls, key) -> "Actor":
        return cls(kind=ActorKind.API_KEY, id=key.prefix, app_id=key.app_id)

    @classmethod
    def user(cls, user) -> "Actor":
        return cls(kind=ActorKind.USER, id=user.get_username())

    @classmethod
    def task(cls, name: str) -> "Actor":
        return cls(kind=ActorKind.TASK, id=name)

    @classmethod
    def system(cls, name: str = "system") -> "Actor":
        return cls(kind=ActorKind.SYSTEM, id=name)

    def __str__(self):
        return f"{self.kind}:{self.id}"


def audit_record(
    *,
    actor: Actor,
    action: str,
    subject: Subject | None = None,
    app: App | None = None,
    object_kind: str = "",
    object_id: object = "",
    data: dict | None = None,
) -> AuditEvent:
    """Append one AuditEvent. Callers run it inside their own transaction."""
    app_id = app.pk if app else (subject.app_id if subject else actor.app_id)
    return AuditEvent.objects.create(
        app_id=app_id,
        subject=subject,
        actor_kind=actor.kind,
        actor_id=actor.id,
        action=action,
        object_kind=object_kind,
        object_id=str(object_id),
        data=data or {},
    )
