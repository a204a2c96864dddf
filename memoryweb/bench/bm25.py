"""A plain BM25 baseline for `bench locomo`, computed in the same run over the same notes.

BM25Okapi from `rank_bm25` (k1 = 1.5, b = 0.75, its defaults) over each subject's notes: the
note text is cut into lower-case word tokens and stop words and one-letter tokens are dropped,
with the same token pattern and stop words as the full-text search
(memory.text.TOKEN_RE, STOPWORDS), but without stemming and without any of
memoryweb's signals. A note keeps every occurrence of a word (BM25's term frequency and
document length); the question is cut the same way into its distinct words, as the full-text
search cuts a message (memory.text.query_terms). The top k notes are the baseline's
"recalled" items. Install with `pip install 'memoryweb[bench]'`.

Until issue 17 the notes went through `query_terms` as well, which drops repeats: every term
frequency was 1 and every document length the number of distinct words. The BM25 figures in
docs/benchmarks.md were re-measured after the change.
"""

import time
from dataclasses import dataclass

from memory.models import Note
from memory.text import STOPWORDS, TOKEN_RE, query_terms


def document_tokens(text: str) -> list[str]:
    """Every word token of a note, repeats kept, in order (stop words and one-letter words out)."""
    return [
        token
        for token in TOKEN_RE.findall(text.lower())
        if (len(token) >= 2 or token.isdigit()) and token not in STOPWORDS
    ]


def question_tokens(text: str) -> list[str]:
    """The distinct word tokens of a question."""
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
        return cls(ids, contents, BM25Okapi([document_tokens(c) for c in contents] or [[]]))

    def top(self, question: str, k: int) -> tuple[list[int], float]:
        """The ids of the best `k` notes for `question` (ties: lower id first), and the ms taken."""
        started = time.perf_counter()
        terms = question_tokens(question)
        if not terms or not self.note_ids:
            return [], (time.perf_counter() - started) * 1000
        scores = self.model.get_scores(terms)  # type: ignore[attr-defined]
        order = sorted(range(len(self.note_ids)), key=lambda i: (-scores[i], i))
        best = [self.note_ids[i] for i in order[:k] if scores[i] > 0]
        return best, (time.perf_counter() - started) * 1000
