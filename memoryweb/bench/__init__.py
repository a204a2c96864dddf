"""The project's benchmarks (DESIGN §9), run by `manage.py bench`.

- `context`: ingest throughput and context-build latency at 1k/10k/100k synthetic notes.
- `locomo`: retrieval recall on the LoCoMo dataset (the data is never copied into the package).
- `cache`: the adaptive context cache on LoCoMo replays: hit rate, latency, recall on and off.
"""
