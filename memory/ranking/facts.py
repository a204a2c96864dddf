"""Which profile facts a message gets: every pinned fact, then the contextual facts whose
keywords the message hits (with `profile.contextualKeywordGate` false, then the other
contextual facts too, newest first)."""

from django.db.models import Q

from memory.config import MemoryConfig
from memory.models import ProfileFact, Subject
from memory.search.lexical import fact_keyword_search


def rank_facts(
    *, subject: Subject, terms: list[str], config: MemoryConfig
) -> list[tuple[ProfileFact, float, str]]:
    """The subject's active facts for a message of `terms`, in placing order, as (fact, score,
    reason)."""
    keyword_hits = fact_keyword_search(subject.pk, terms)
    hit_ids = {h.id for h in keyword_hits}
    # the pinned facts and the keyword hits (active facts of the subject, as the search found
    # them) in one query
    wanted = Q(pinned=True) | Q(pk__in=hit_ids) if hit_ids else Q(pinned=True)
    active = list(ProfileFact.objects.filter(wanted, subject=subject, valid_to=None).order_by("key", "id"))
    pinned = [f for f in active if f.pinned]
    contextual = {f.pk: f for f in active if f.pk in hit_ids}
    chosen: list[tuple[ProfileFact, float, str]] = [(f, 1.0, "pinned") for f in pinned]
    terms_set = set(terms)
    for hit in keyword_hits:
        fact = contextual.get(hit.id)
        if fact is not None:
            matched = [k for k in fact.keywords if set(k.split()) & terms_set] or fact.keywords[:1]
            chosen.append((fact, hit.score, f"keyword: {', '.join(matched)}"))
    if not config["profile.contextualKeywordGate"]:
        ungated = ProfileFact.objects.filter(subject=subject, valid_to=None, pinned=False).exclude(
            pk__in=list(contextual)
        )
        chosen.extend(
            (f, 0.0, "contextual (keyword gate off)") for f in ungated.order_by("-valid_from", "-id")
        )
    return chosen
