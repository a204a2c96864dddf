"""Which app wrote an item of a subject's memory, for the dashboard's lists and their `?app=`.

A subject belongs to one App (`Subject.app`): what that App wrote through the API — directly,
by reflection on the messages it posted, or by importing an export — carries the origins
below; the person writes from the dashboard, and memoryweb's own jobs (consolidation) write
lessons and procedures.
"""

from memory.models import Origin, Subject

# the origins of what the subject's App wrote through the API (directly, by reflection on the
# messages it posted, or by importing an export)
APP_ORIGINS = (Origin.API, Origin.REFLECTION, Origin.IMPORT)


def writer_label(subject: Subject, origin: str) -> str:
    """Who wrote an item of `subject` with this origin: its App's name, "you (dashboard)" or
    "memoryweb" (consolidation and other jobs)."""
    if origin in APP_ORIGINS:
        return subject.app.name
    if origin == Origin.DASHBOARD:
        return "you (dashboard)"
    return "memoryweb"


def writer_origins(subject: Subject, app_name: str) -> tuple[str, ...] | None:
    """What a list's `?app=<name>` keeps, as origins: None (no name: everything), the App's
    origins when it names the subject's App, () — nothing — for any other name."""
    if not app_name:
        return None
    return APP_ORIGINS if app_name == subject.app.name else ()
