"""The project's own exception types. Services raise these; one API handler maps them to HTTP,
in the one error envelope that `error_body()` writes."""


def error_body(code: str, message: str, field: str | None = None, fields: dict | None = None) -> dict:
    """`{"error": {"code", "message", "field"?, "fields"?}}`: every error answer of the API."""
    error: dict = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    if fields:
        error["fields"] = fields
    return {"error": error}


class MemorywebError(Exception):
    status_code = 400
    code = "error"

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(MemorywebError):
    """Bad input; `field` names the offending field."""

    code = "invalid"


class NotFound(MemorywebError):
    status_code = 404
    code = "not_found"


class AppPaused(MemorywebError):
    status_code = 403
    code = "app_paused"


class AppPausedForSubject(MemorywebError):
    """The person paused this App's access to their memory (memory.models.SubjectAppPause)."""

    status_code = 403
    code = "app_paused_for_subject"


class ConfigError(MemorywebError):
    """An unknown key or a value of the wrong type in the MEMORY tree."""

    code = "config"

    def __init__(self, message: str, *, key: str | None = None):
        super().__init__(message, field=key)
        self.key = key


class FeatureDisabled(MemorywebError):
    """The App's configuration switches this off; `field` names the key (`memory.voting.enabled`)."""

    status_code = 409
    code = "disabled"


class Conflict(MemorywebError):
    """The thing to create exists already; `field` names what collides."""

    status_code = 409
    code = "conflict"


class PayloadTooLarge(MemorywebError):
    """A request body over DATA_UPLOAD_MAX_MEMORY_SIZE; nothing of it was read or written."""

    status_code = 413
    code = "too_large"


class NotAllowed(MemorywebError):
    """Valid input the App is not authorised for (a high-risk operational profile it has not
    opted into); `field` names the field."""

    status_code = 403
    code = "not_allowed"
