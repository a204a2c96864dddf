from django.db import connection

from memory.config import MemoryConfig


def eviction_order(config: MemoryConfig) -> str:
    """The ORDER BY that puts the first to evict first, for notes and evidence alike: the
    oldest (FIFO), or with `eviction.utilityWeighted` the least useful."""
    if config["eviction.utilityWeighted"]:
        # least useful first: low votes, rarely recalled, long ago recalled, long untouched
        nulls_first = "" if connection.vendor == "sqlite" else " NULLS FIRST"
        return f"vote_score ASC, recall_count ASC, last_recalled_at ASC{nulls_first}, updated_at ASC, id ASC"
    return "created_at ASC, id ASC"
