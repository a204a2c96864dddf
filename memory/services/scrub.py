from memory.redaction import redact
from memoryweb.counters import counter_add


def scrub(text: str, *, where: str) -> str:
    """`text` with secrets replaced by [REDACTED:kind]; each removal is counted under
    `redaction.<where>`. Every service that stores user text calls this first."""
    result = redact(text)
    if result.count:
        counter_add(f"redaction.{where}", result.count)
    return result.text
