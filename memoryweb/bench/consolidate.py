"""`bench consolidate`: time per consolidation tick and clusters found on a synthetic linked corpus.

For each size N a fresh App `bench-consolidate-n<N>-seed<seed>` gets one subject holding all N
notes (a tick works per subject, so this is the worst case for one tick). The corpus:

- about 55% of the notes sit in topical clusters of realistic sizes (mostly 2–8 notes, a few of
  20–40), whose notes share a topic tag and a few rare words (a project code name, a person, a
  place), linked as a random tree plus some extra edges; one cluster in five describes steps
  ("first I …, then …"), so procedures are written too; one member in ten lacks the topic tag;
- the rest is noise: unlinked notes, a third of them linked to one random note anywhere, which
  bridges clusters into larger mixed components, as a real link graph does over time;
- a fifth of the notes carry a non-zero vote score, for the decay tick.

Notes and links are bulk-inserted (the FTS triggers index every row). Then `--ticks`
consolidation ticks run with the heuristic distiller, each timed and reported with what it
found, and one vote-decay tick is timed. Consolidation changes the data (notes are archived),
so every run refills: an App left by an earlier run of the same size and seed is deleted first.
"""

import random
import time
from collections.abc import Callable

from django.db import connection, transaction

from consolidation.services import consolidation_run, votes_decay
from memory.config import get_config
from memory.leases import lease_owner_id
from memory.models import App, Note, NoteLink, Origin
from memory.services import Actor, app_create, subject_get_or_create
from memoryweb.bench import synthetic
from memoryweb.bench.report import table

BULK_BATCH = 5000
CLUSTERED_SHARE = 0.55
BRIDGED_NOISE_SHARE = 0.33
VOTED_SHARE = 0.2
CLUSTER_SIZES = [2, 3, 3, 4, 4, 5, 5, 6, 7, 8]  # and one cluster in fifty of 20–40 notes

PROCEDURE_TEMPLATES = [
    "Fixing the {code} build: first I cleared the {tool} cache, then ran the tests, after that "
    "redeployed to {place} and finally checked the logs.",
    "For {code} releases: first tag the commit, then build the {tool} image, then push it and "
    "finally restart the workers in {place}.",
    "When {tool} breaks on {code}: first I restarted the service, then cleared the queue and "
    "after that watched the dashboard for ten minutes.",
]


def app_name(size: int, seed: int) -> str:
    return f"bench-consolidate-n{size}-seed{seed}"


def _cluster_sizes(rng: random.Random, budget: int) -> list[int]:
    sizes = []
    while budget > 1:
        size = rng.randint(20, 40) if rng.random() < 0.02 else rng.choice(CLUSTER_SIZES)
        size = min(size, budget)
        sizes.append(size)
        budget -= size
    return sizes


def corpus(size: int, seed: int) -> tuple[list[tuple[str, list[str], float]], list[tuple[int, int]]]:
    """(content, tags, vote_score) per note and the links as pairs of note positions."""
    rng = random.Random(seed)
    vocab = synthetic.Vocabulary(seed)
    notes: list[tuple[str, list[str], float]] = []
    edges: list[tuple[int, int]] = []

    def score() -> float:
        return round(rng.uniform(-2, 3), 2) if rng.random() < VOTED_SHARE else 0.0

    for cluster_size in _cluster_sizes(rng, int(size * CLUSTERED_SHARE)):
        anchor = vocab.slots()  # the cluster's shared code name, person, place, tool …
        procedural = rng.random() < 0.2
        templates = PROCEDURE_TEMPLATES if procedural else rng.sample(synthetic.NOTE_TEMPLATES, 3)
        topic = (synthetic.TEMPLATE_TAGS.get(templates[0]) or ["work"])[0]
        start = len(notes)
        for i in range(cluster_size):
            slots = vocab.slots()
            slots.update({k: anchor[k] for k in ("code", "person", "place", "tool", "food", "hobby")})
            template = rng.choice(templates)
            tags = sorted(set(synthetic.TEMPLATE_TAGS.get(template, [])) | {topic})
            if rng.random() < 0.1:
                tags = [t for t in tags if t != topic] or ["misc"]
            notes.append((template.format(**slots), tags, score()))
            if i:
                edges.append((start + rng.randrange(i), start + i))  # a random tree
        for _ in range(cluster_size // 4):
            a, b = rng.sample(range(start, start + cluster_size), 2)
            edges.append((a, b))
    clustered = len(notes)
    for content, tags, _ in synthetic.notes(size - clustered, seed=seed + 1):
        notes.append((content, tags, score()))
        if rng.random() < BRIDGED_NOISE_SHARE:
            edges.append((len(notes) - 1, rng.randrange(len(notes) - 1)))
    return notes, [(a, b) for a, b in edges if a != b]


def fill(*, size: int, seed: int, actor: Actor, out: Callable[[str], None]):
    """A fresh App with one subject holding the corpus; returns (subject, notes, links, seconds)."""
    name = app_name(size, seed)
    old = App.objects.filter(name=name).first()
    if old is not None:
        out(f"  deleting the previous run's app {name}")
        Note.objects.filter(subject__app=old).delete()
        old.delete()
    app = app_create(name=name, config={"memory": {"notes": {"maxEntries": size + 10}}}, actor=actor)
    subject = subject_get_or_create(app=app, external_id="bench-user")
    started = time.perf_counter()
    rows, edges = corpus(size, seed)
    ids: list[int] = []
    for i in range(0, len(rows), BULK_BATCH):
        batch = [
            Note(subject=subject, content=c, tags=t, vote_score=v, origin=Origin.IMPORT)
            for c, t, v in rows[i : i + BULK_BATCH]
        ]
        with transaction.atomic():
            ids += [note.pk for note in Note.objects.bulk_create(batch, batch_size=1000)]
    links = [NoteLink(src_id=ids[a], dst_id=ids[b], origin=Origin.IMPORT) for a, b in edges]
    with transaction.atomic():
        NoteLink.objects.bulk_create(links, batch_size=2000, ignore_conflicts=True)
    return subject, len(rows), len(links), time.perf_counter() - started


def run(*, sizes: list[int], ticks: int = 3, seed: int = 1, out: Callable[[str], None] = print) -> dict:
    """Fill each size, run `ticks` consolidation ticks and one decay tick; returns the results."""
    actor = Actor.system("bench")
    results: dict = {}
    for size in sizes:
        out(f"size {size}: one subject")
        subject, notes, links, fill_s = fill(size=size, seed=seed, actor=actor, out=out)
        out(f"  filled {notes} notes and {links} links in {fill_s:.1f} s")
        config = get_config(subject.app)
        owner = lease_owner_id()
        tick_results = []
        for n in range(ticks):
            started = time.perf_counter()
            job = consolidation_run(subject=subject, config=config, actor=actor, owner=owner)
            elapsed = (time.perf_counter() - started) * 1000
            assert job is not None, "the bench subject's lease is held by another process"
            s = job.stats
            tick_results.append(
                {
                    "tick_ms": round(elapsed, 1),
                    "find_ms": s["find_ms"],
                    "distill_ms": s["distill_ms"],
                    "candidates": s["candidates"],
                    "links": s["links"],
                    "clusters_found": s["clusters_found"],
                    "clusters": s["clusters"],
                    "lessons": s["lessons"],
                    "procedures": s["procedures"],
                    "notes_archived": s["notes_archived"],
                    "declined": s["declined"],
                }
            )
            out(
                f"  tick {n + 1}: {elapsed:.0f} ms, {s['clusters_found']} clusters found, "
                f"{s['lessons']} lessons, {s['procedures']} procedures"
            )
        started = time.perf_counter()
        decay = votes_decay(actor=actor, app=subject.app, force=True)
        decay_ms = (time.perf_counter() - started) * 1000
        results[str(size)] = {
            "notes": notes,
            "links": links,
            "fill_s": round(fill_s, 1),
            "ticks": tick_results,
            "decay_ms": round(decay_ms, 1),
            "decayed_notes": decay.stats.get("notes") if decay else None,
        }
    return {"sizes": results, "db": connection.vendor, "ticks": ticks, "seed": seed}


def render(summary: dict) -> str:
    headers = [
        "notes",
        "links",
        "clusters found",
        "distilled",
        "procedures",
        "find ms",
        "tick ms",
        "next tick ms",
        "decay ms",
    ]
    rows = []
    for size, r in summary["sizes"].items():
        first = r["ticks"][0] if r["ticks"] else {}
        later = [t["tick_ms"] for t in r["ticks"][1:]]
        rows.append(
            [
                int(size),
                r["links"],
                first.get("clusters_found"),
                first.get("lessons"),
                first.get("procedures"),
                first.get("find_ms"),
                first.get("tick_ms"),
                round(sum(later) / len(later), 1) if later else None,
                r["decay_ms"],
            ]
        )
    return (
        table(headers, rows)
        + "\n(one subject holds all the notes; a tick distils at most consolidation.maxClustersPerTick "
        "clusters with the heuristic; find = reading candidates and links and finding the clusters; "
        "next tick = mean of the later ticks; decay = one votes_decay tick for the app)"
    )
