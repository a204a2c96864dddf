"""Reading beliefs (facts and notes) as one list, with their evidence, versions and revisions: the
REST endpoints (memory/api/beliefs.py) and the dashboard's Beliefs page share these.

A belief is named `f:ID` (a ProfileFact row: one version of a key under its mode and scope) or
`n:ID` (a Note; its versions are NoteVersion rows). Revising goes through
memory.services.beliefs.revision_apply, never through here.
"""

import re
from dataclasses import dataclass, field

from django.db.models import Q

from memory.beliefs import BELIEF
from memory.models import BeliefRevision, Evidence, Note, NoteSource, ProfileFact, RevisionAction, Subject
from memory.text import query_terms
from memoryweb.errors import InvalidInput, NotFound

BELIEF_REF = re.compile(r"([fn]):([0-9]+)")
BELIEF_REF_MESSAGE = "a belief is f:ID (a fact) or n:ID (a note)"
KINDS = {"f": "fact", "n": "note"}


@dataclass
class BeliefView:
    """One belief as the API and the dashboard show it."""

    obj: ProfileFact | Note
    evidence: list[int] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "fact" if isinstance(self.obj, ProfileFact) else "note"

    @property
    def ref(self) -> str:
        return f"{self.kind[0]}:{self.obj.pk}"

    @property
    def text(self) -> str:
        obj = self.obj
        return f"{obj.key}: {obj.value}" if isinstance(obj, ProfileFact) else obj.content

    @property
    def active(self) -> bool:
        obj = self.obj
        return obj.valid_to is None if isinstance(obj, ProfileFact) else obj.archived_at is None

    def as_dict(self) -> dict:
        obj = self.obj
        fact = obj if isinstance(obj, ProfileFact) else None
        note = obj if isinstance(obj, Note) else None
        return {
            "id": self.ref,
            "kind": self.kind,
            "layer": BELIEF,
            "text": self.text,
            "key": fact.key if fact else None,
            "value": fact.value if fact else None,
            "mode": obj.mode,
            "scope": obj.scope,
            "confidence": round(obj.confidence, 4),
            "active": self.active,
            "evidence": list(self.evidence),
            "exceptions": list(fact.exceptions) if fact else [],
            "valid_from": fact.valid_from if fact else None,
            "valid_to": fact.valid_to if fact else None,
            "archived_at": note.archived_at if note else None,
            "created_at": obj.created_at,
        }


def belief_ref(belief: ProfileFact | Note) -> str:
    """f:ID or n:ID."""
    return f"{'f' if isinstance(belief, ProfileFact) else 'n'}:{belief.pk}"


def belief_ref_parse(ref: str, *, field_name: str = "belief") -> tuple[str, int]:
    """'f:12' → ('fact', 12), 'n:5' → ('note', 5); InvalidInput naming `field_name` otherwise."""
    match = BELIEF_REF.fullmatch(ref or "")
    if match is None:
        raise InvalidInput(BELIEF_REF_MESSAGE, field=field_name)
    return KINDS[match[1]], int(match[2])


def belief_get(*, subject: Subject, ref: str, field_name: str = "belief_id") -> ProfileFact | Note:
    """The subject's belief `ref`; another subject's, a missing one or a `ref` that names none
    (not f:ID or n:ID) is NotFound."""
    if BELIEF_REF.fullmatch(ref or "") is None:
        raise NotFound(f"no belief {ref!r}: {BELIEF_REF_MESSAGE}", field=field_name)
    kind, pk = belief_ref_parse(ref, field_name=field_name)
    model = ProfileFact if kind == "fact" else Note
    obj = model.objects.filter(subject=subject, pk=pk).first()
    if obj is None:
        raise NotFound(f"no belief {ref} for this subject", field=field_name)
    return obj


def evidence_ids_bulk(beliefs: list[ProfileFact | Note]) -> dict[str, list[int]]:
    """The Evidence units each belief rests on (its source message's, a note's other sources',
    and those of the messages of the revisions that touched it), for many beliefs at once
    (three queries): ref → evidence ids, oldest first."""
    if not beliefs:
        return {}
    messages: dict[str, set[int]] = {}
    notes = [b.pk for b in beliefs if isinstance(b, Note)]
    facts = [b.pk for b in beliefs if isinstance(b, ProfileFact)]
    for b in beliefs:
        messages[belief_ref(b)] = {b.source_message_id} if b.source_message_id else set()
    for note_id, message_id in NoteSource.objects.filter(note_id__in=notes).values_list(
        "note_id", "message_id"
    ):
        messages[f"n:{note_id}"].add(message_id)
    revised = BeliefRevision.objects.filter(
        Q(belief_kind="fact", belief_id__in=facts) | Q(belief_kind="note", belief_id__in=notes)
    ).exclude(message=None)
    for kind, belief_id, message_id in revised.values_list("belief_kind", "belief_id", "message_id"):
        messages[f"{kind[0]}:{belief_id}"].add(message_id)
    wanted = {m for found in messages.values() for m in found if m is not None}
    units = list(
        Evidence.objects.filter(message_id__in=wanted)
        .order_by("occurred_at", "id")
        .values_list("id", "message_id")
    )
    return {ref: [uid for uid, mid in units if mid in found] for ref, found in messages.items()}


def belief_list(
    *, subject: Subject, kind: str = "", q: str = "", archived: bool = False, limit: int = 50
) -> list[BeliefView]:
    """The subject's facts and notes as beliefs, newest first (facts, then notes, each by
    recency): only active ones unless `archived`; `kind` "fact" or "note"; `q` keeps those whose
    text holds every word of it."""
    terms = query_terms(q) if q else []
    words = [w.lower() for w in q.split()] if q and not terms else []
    out: list[ProfileFact | Note] = []
    if kind in ("", "fact"):
        facts = ProfileFact.objects.filter(subject=subject)
        if not archived:
            facts = facts.filter(valid_to=None)
        for term in terms or words:
            facts = facts.filter(Q(key__icontains=term) | Q(value__icontains=term))
        out += list(facts.order_by("-created_at", "-id")[:limit])
    if kind in ("", "note") and len(out) < limit:
        notes = Note.objects.filter(subject=subject)
        if not archived:
            notes = notes.filter(archived_at=None)
        for term in terms or words:
            notes = notes.filter(content__icontains=term)
        out += list(notes.order_by("-created_at", "-id")[: limit - len(out)])
    evidence = evidence_ids_bulk(out)
    return [BeliefView(o, evidence[belief_ref(o)]) for o in out]


def belief_versions(belief: ProfileFact | Note) -> list[dict]:
    """Every version of the belief, oldest first: a fact's rows of its key (all qualifiers),
    a note's NoteVersion rows; each with the revision that wrote it, if one did."""
    if isinstance(belief, ProfileFact):
        rows = list(
            ProfileFact.objects.filter(subject_id=belief.subject_id, key=belief.key).order_by(
                "valid_from", "id"
            )
        )
        made_by = _revision_of_rows("fact", [r.pk for r in rows], belief.subject_id)
        return [
            {
                "id": f"f:{r.pk}",
                "version": i,
                "text": r.value,
                "mode": r.mode,
                "scope": r.scope,
                "confidence": round(r.confidence, 4),
                "active": r.valid_to is None,
                "valid_from": r.valid_from,
                "valid_to": r.valid_to,
                "created_at": r.created_at,
                "revision": made_by.get(r.pk),
            }
            for i, r in enumerate(rows, 1)
        ]
    versions = list(belief.versions.order_by("version"))
    return [
        {
            "id": f"n:{belief.pk}",
            "version": v.version,
            "text": v.content,
            "mode": belief.mode,
            "scope": belief.scope,
            "confidence": None,
            "active": v.version == belief.version and belief.archived_at is None,
            "valid_from": None,
            "valid_to": None,
            "created_at": v.created_at,
            "revision": None,
        }
        for v in versions
    ]


def _revision_of_rows(kind: str, ids: list[int], subject_id: int) -> dict[int, dict]:
    """For each fact row id, the revision that wrote it (its `result_ids` name the row and it
    is not the row revised in place): {"id", "action", "reason", "decided_by"}."""
    out: dict[int, dict] = {}
    rows = BeliefRevision.objects.filter(subject_id=subject_id, belief_kind=kind, belief_id__in=ids)
    for revision in rows.order_by("created_at", "id"):
        for pk in revision.result_ids or []:
            if pk in ids and pk != revision.belief_id:
                out.setdefault(pk, _revision_brief(revision))
    return out


def fact_versions_revisions(versions: list[ProfileFact]) -> None:
    """The profile history page's view of each fact version: `v.written_by` (the revision that
    wrote it, or None) and `v.revised` (the revisions applied to it in place: REINFORCE, WEAKEN,
    MARK_EXCEPTION, ARCHIVE, or a split or correction of it), each with its reason."""
    if not versions:
        return
    ids = [v.pk for v in versions]
    rows = list(
        BeliefRevision.objects.filter(
            subject_id=versions[0].subject_id, belief_kind="fact", belief_id__in=ids
        ).order_by("created_at", "id")
    )
    for v in versions:
        # attributes for the template only (not fields)
        v.written_by = next(  # type: ignore[attr-defined]
            (r for r in rows if v.pk in (r.result_ids or []) and r.belief_id != v.pk), None
        )
        v.revised = [r for r in rows if r.belief_id == v.pk]  # type: ignore[attr-defined]
        v.belief_ref = belief_ref(v)  # type: ignore[attr-defined]


def _revision_brief(revision: BeliefRevision) -> dict:
    return {
        "id": revision.pk,
        "action": revision.action,
        "reason": revision.reason,
        "decided_by": revision.decided_by,
        "created_at": revision.created_at,
    }


def belief_revisions(belief: ProfileFact | Note) -> list[BeliefRevision]:
    """The revisions that bore on the belief, oldest first: for a fact, on any version of its
    key (a revision of an older version made this one); for a note, on it."""
    if isinstance(belief, ProfileFact):
        ids = list(
            ProfileFact.objects.filter(subject_id=belief.subject_id, key=belief.key).values_list(
                "id", flat=True
            )
        )
        rows = BeliefRevision.objects.filter(
            subject_id=belief.subject_id, belief_kind="fact", belief_id__in=ids
        )
    else:
        rows = BeliefRevision.objects.filter(
            subject_id=belief.subject_id, belief_kind="note", belief_id=belief.pk
        )
    return list(rows.order_by("created_at", "id"))


def revision_list(
    *, subject: Subject, action: str = "", belief: str = "", limit: int = 50
) -> list[BeliefRevision]:
    """The subject's revisions, newest first; `action` one of RevisionAction, `belief` f:ID or
    n:ID (the belief revised, or one a revision wrote)."""
    rows = BeliefRevision.objects.filter(subject=subject)
    if action:
        if action not in RevisionAction.values:
            raise InvalidInput(f"action must be one of {', '.join(RevisionAction.values)}", field="action")
        rows = rows.filter(action=action)
    if belief:
        kind, pk = belief_ref_parse(belief, field_name="belief")
        rows = rows.filter(belief_kind=kind)
        matching = [
            r for r in rows.order_by("-created_at", "-id") if r.belief_id == pk or pk in (r.result_ids or [])
        ]
        return matching[:limit]
    return list(rows.order_by("-created_at", "-id")[:limit])


def revision_as_dict(revision: BeliefRevision) -> dict:
    return {
        "id": revision.pk,
        "action": revision.action,
        "belief": f"{revision.belief_kind[0]}:{revision.belief_id}",
        "results": [f"{revision.belief_kind[0]}:{pk}" for pk in revision.result_ids or []],
        "message": revision.message_id,
        "claim": revision.claim,
        "signals": list(revision.signals or []),
        "reason": revision.reason,
        "decided_by": revision.decided_by,
        "before": revision.before,
        "after": revision.after,
        "created_at": revision.created_at,
    }
