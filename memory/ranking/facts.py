"""Which profile facts a message gets: every pinned fact, then the contextual facts whose
keywords the message hits — by the words themselves, and with embeddings on by meaning too
("dinner" is near the keyword "food": the peanut allergy comes up for "any dinner ideas?") —
and with `profile.contextualKeywordGate` false, then the other contextual facts too, newest
first."""

import numpy as np

from memory.config import MemoryConfig
from memory.models import ProfileFact, Subject
from memory.search.lexical import fact_keyword_search
from memory.search.vectors.query import word_vectors
from memoryweb.db import placeholders


def _by_meaning(
    facts: list[ProfileFact], terms: list[str], config: MemoryConfig
) -> list[tuple[ProfileFact, float, str]]:
    """The facts one of whose keywords a word of the message is near (cosine of the two word
    vectors ≥ `profile.keywordSimilarity`), best first, with the pair that matched. Nothing
    when embeddings are off or the provider failed."""
    threshold = config["profile.keywordSimilarity"]
    words = [t for t in terms if t.isalpha() and len(t) >= 3]
    if not facts or not words or threshold >= 1.0:
        return []
    keywords = sorted({k for fact in facts for k in fact.keywords})
    vectors = word_vectors(config, words + keywords)
    if not vectors:
        return []
    message = np.stack([vectors[w] for w in words])
    hits = []
    for fact in facts:
        best, pair = -1.0, ("", "")
        for keyword in fact.keywords:
            vector = vectors.get(keyword)
            if vector is None:
                continue
            similarities = message @ vector
            i = int(np.argmax(similarities))
            if float(similarities[i]) > best:
                best, pair = float(similarities[i]), (words[i], keyword)
        if best >= threshold:
            hits.append((fact, round(best, 4), f"keyword by meaning: {pair[0]} ~ {pair[1]}"))
    return sorted(hits, key=lambda hit: -hit[1])


def _active_facts(subject: Subject, where: str, params: list, *, order: str) -> list[ProfileFact]:
    """The subject's active (current, unparked) facts that pass `where`, in `order`: two
    statements a build, in SQL (`raw` still makes the models), as the ORM's compiling of them
    cost more than running them."""
    return list(
        ProfileFact.objects.raw(
            f"SELECT * FROM {ProfileFact._meta.db_table} WHERE subject_id = %s AND valid_to IS NULL "
            f"AND parked_at IS NULL AND {where} ORDER BY {order}",
            [subject.pk, *params],
        )
    )


def rank_facts(
    *, subject: Subject, terms: list[str], config: MemoryConfig
) -> list[tuple[ProfileFact, float, str]]:
    """The subject's active facts for a message of `terms`, in placing order, as (fact, score,
    reason)."""
    keyword_hits = fact_keyword_search(subject.pk, terms)
    hit_ids = {h.id for h in keyword_hits}
    # the pinned facts and the keyword hits (active facts of the subject, as the search found
    # them) in one query
    hits = sorted(hit_ids)
    wanted = f"(pinned OR id IN ({placeholders(hits)}))" if hits else "pinned"
    active = _active_facts(subject, wanted, hits, order='"key", id')
    pinned = [f for f in active if f.pinned]
    contextual = {f.pk: f for f in active if f.pk in hit_ids}
    chosen: list[tuple[ProfileFact, float, str]] = [(f, 1.0, "pinned") for f in pinned]
    terms_set = set(terms)
    for hit in keyword_hits:
        fact = contextual.get(hit.id)
        if fact is not None:
            matched = [k for k in fact.keywords if set(k.split()) & terms_set] or fact.keywords[:1]
            chosen.append((fact, hit.score, f"keyword: {', '.join(matched)}"))
    by_meaning = (
        config["profile.keywordSimilarity"] < 1.0
        and config["embeddings.enabled"]
        and config["embeddings.provider"] != "none"
    )
    gated = config["profile.contextualKeywordGate"]
    if not (by_meaning or not gated):
        return chosen
    known = sorted(contextual)
    others = _active_facts(
        subject,
        f"NOT pinned AND id NOT IN ({placeholders(known)})" if known else "NOT pinned",
        known,
        order="valid_from DESC, id DESC",
    )
    near = _by_meaning(others, terms, config) if by_meaning else []
    chosen.extend(near)
    if not gated:
        placed = {fact.pk for fact, _, _ in near}
        ungated = [f for f in others if f.pk not in placed]
        chosen.extend((f, 0.0, "contextual (keyword gate off)") for f in ungated)
    return chosen
