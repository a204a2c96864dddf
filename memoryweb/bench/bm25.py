"""A plain BM25 baseline for `bench locomo`, computed in the same run over the same notes.

BM25Okapi from `rank_bm25` (k1 = 1.5, b = 0.75, its defaults) over each subject's notes: the
note text is cut into lower-case word tokens and stop words are dropped, the same way the
full-text search cuts a message (memory.text.query_terms), but without stemming and
without any of memoryweb's signals. The question is tokenised the same way; the top k notes are
the baseline's "recalled" items. Install with `pip install 'memoryweb[bench]'`.
"""

import time
from dataclasses import dataclass

from memory.models import Note
from memory.text import query_terms


def _tokens(text: str) -> list[str]:
    return query_terms(text, limit=100_000)


@dataclass
class Bm25Index:
    note_ids: list[int]
    contents: list[str]
    model: object

    @classmethod
    def for_subject(cls, subject) -> "Bm25Index":
        try:
            from rank_bm25 import BM25Okapi
        except ImportError as exc:  # the bench extra
            raise RuntimeError("the BM25 baseline needs rank-bm25: pip install 'memoryweb[bench]'") from exc
        rows = list(
            Note.objects.filter(subject=subject, archived_at__isnull=True)
            .order_by("pk")
            .values_list("pk", "content")
        )
        ids, contents = [r[0] for r in rows], [r[1] for r in rows]
        # rank_bm25 divides by the corpus size: an empty corpus gets one empty document
        return cls(ids, contents, BM25Okapi([_tokens(c) for c in contents] or [[]]))

    def top(self, question: str, k: int) -> tuple[list[int], float]:
        """The ids of the best `k` notes for `question` (ties: lower id first), and the ms taken."""
        started = time.perf_counter()
        terms = _tokens(question)
        if not terms or not self.note_ids:
            return [], (time.perf_counter() - started) * 1000
        scores = self.model.get_scores(terms)  # type: ignore[attr-defined]
        order = sorted(range(len(self.note_ids)), key=lambda i: (-scores[i], i))
        best = [self.note_ids[i] for i in order[:k] if scores[i] > 0]
        return best, (time.perf_counter() - started) * 1000
