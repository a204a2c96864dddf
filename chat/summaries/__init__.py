"""The session-summary pipeline (issue 11; DESIGN §3 SessionExtraction, MemoryDocument).

- `blocks` — the raw memory block a conversation's extraction is written as;
- `extract` — phase 1, one conversation → its Extraction (heuristic, or a model with
  memories/stage_one_*.md);
- `compose` — phase 2, a subject's (or a project scope's) extractions → MEMORY.md, the summary
  to inject and skills (heuristic, or a model with memories/consolidation*.md);
- `pipeline` — which conversations are due, the lease, the writes (memory.services.documents);
- `mental_models` — named documents about the person, refreshed from the fabric and the
  extractions.

`memory.backend` = "local" switches it on per App; the fabric runs either way.
"""
