"""memory.read: a memory:// document the conversation can see."""

from memory.api.documents import DocumentDetailOut
from memory.documents import document_resolve, parse_url, project_of
from memory.tools.registry import Tool, ToolContext, register
from memoryweb.errors import NotFound


# --- memory:// --------------------------------------------------------------------------------
def _memory_read(context: ToolContext, arguments: dict) -> dict:
    url = arguments["url"].strip()
    address = parse_url(url)
    project = project_of(context.scope, context.working_dir)
    if address is None or address.scope not in {"", project}:  # another project's looks missing
        raise NotFound(f"no memory document at {url}", field="url")
    return DocumentDetailOut(document_resolve(subject=context.subject, url=url)).data


register(
    Tool(
        name="memory.read",
        description="Read a memory document by its memory:// address, as cited in your context: "
        "memory://root (the summary of what is known about the user), memory://root/MEMORY.md, "
        "memory://root/skills/<name>/SKILL.md, memory://root/mental_models/<name>.md, or the same "
        "under memory://scope/<project>/ for this conversation's project. Returns its Markdown.",
        input_schema={
            "properties": {
                "url": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1000,
                    "pattern": "^memory://",
                    "description": "The document's address, e.g. memory://root/MEMORY.md.",
                }
            },
            "required": ["url"],
        },
        run=_memory_read,
    )
)
