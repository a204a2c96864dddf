"""Whether a revision kept the history: versions are only ever added."""

from memory.models import Evidence, Note, NoteVersion, ProfileFact


def history_snapshot(subject) -> dict:
    """What must survive any revision of the subject's memory: every fact row (its key, value,
    qualifiers and start), every note, every note version (its content) and evidence unit."""
    return {
        "facts": {
            pk: (key, value, mode, scope, start.isoformat() if start else None)
            for pk, key, value, mode, scope, start in ProfileFact.objects.filter(subject=subject).values_list(
                "pk", "key", "value", "mode", "scope", "valid_from"
            )
        },
        "notes": set(Note.objects.filter(subject=subject).values_list("pk", flat=True)),
        "note_versions": {
            pk: (note_id, version, content)
            for pk, note_id, version, content in NoteVersion.objects.filter(
                note__subject=subject
            ).values_list("pk", "note_id", "version", "content")
        },
        "evidence": set(Evidence.objects.filter(subject=subject).values_list("pk", flat=True)),
    }


def history_problems(before: dict, after: dict) -> list[str]:
    """How `after` lost or rewrote what `before` held; [] when history only grew."""
    problems = []
    for pk, row in before["facts"].items():
        now = after["facts"].get(pk)
        if now is None:
            problems.append(f"fact row f:{pk} ({row[0]}={row[1]!r}) was deleted")
        elif now != row:
            problems.append(f"fact row f:{pk} was rewritten in place: {row} → {now}")
    for pk in sorted(before["notes"] - after["notes"]):
        problems.append(f"note n:{pk} was deleted")
    for pk, row in before["note_versions"].items():
        now = after["note_versions"].get(pk)
        if now is None:
            problems.append(f"version {row[1]} of note n:{row[0]} was deleted")
        elif now != row:
            problems.append(f"version {row[1]} of note n:{row[0]} was rewritten")
    for pk in sorted(before["evidence"] - after["evidence"]):
        problems.append(f"evidence unit e:{pk} was deleted")
    return problems
