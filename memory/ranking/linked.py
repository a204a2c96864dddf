"""How a note reached over a link scores and where it goes: parent score ×
`links.expandedScoreFactor` × edge weight; direct hits keep the `### recalled` slots they win,
reached notes compete with the rest for the memory index (memory/links.py finds them)."""

from memory.config import MemoryConfig
from memory.models import Note
from memory.ranking.notes import RANKED_FIELDS


def rank_linked(ranked: list, reached: list, *, config: MemoryConfig) -> tuple[list, set[int]]:
    """Merge the notes `reached` over links (BFS order: parents first) into the context's
    `ranked` [(note, score, reason)]; returns (ranked, the reached notes' ids)."""
    # the columns a ranked note loads (memory/ranking/notes.py): a reached note is read alike
    notes = Note.objects.only(*RANKED_FIELDS).in_bulk([r.note_id for r in reached])
    scores = {note.pk: score for note, score, _ in ranked if isinstance(note, Note)}  # not evidence
    factor = config["links.expandedScoreFactor"]
    linked = []
    for r in reached:
        scores[r.note_id] = scores[r.from_id] * factor * r.weight
        note = notes.get(r.note_id)
        if note is not None:
            linked.append((note, scores[r.note_id], f"linked ({r.kind}) from n:{r.from_id}"))
    k = config["recallInjection.k"]
    rest = sorted([*ranked[k:], *linked], key=lambda r: (-r[1], -r[0].pk))
    return [*ranked[:k], *rest], {note.pk for note, _, _ in linked}
