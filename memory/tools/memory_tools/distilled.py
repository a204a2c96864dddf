"""memory.lessons.recall and memory.procedures.recall."""

from memory.api.lessons import LessonOut, ProcedureOut
from memory.models import Lesson, Procedure
from memory.search.lexical import lesson_search, procedure_search
from memory.selectors import distilled_recall
from memory.services.notes import recalls_count
from memory.tools.memory_tools.common import (
    QUERY,
    k_schema,
)
from memory.tools.registry import Tool, ToolContext, register


# --- lessons and procedures -------------------------------------------------------------------
def _distilled(model, search, out, key: str):
    def run(context: ToolContext, arguments: dict) -> dict:
        results = distilled_recall(
            model=model,
            search=search,
            subject=context.subject,
            query=arguments.get("query", ""),
            k=arguments.get("k", 5),
        )
        recalls_count(model=model, ids=[item.pk for item, _ in results])  # type: ignore[attr-defined]
        items = []
        for item, score in results:
            data = out(item).data
            data["score"] = round(score, 4)
            items.append(data)
        return {key: items}

    return run


register(
    Tool(
        name="memory.lessons.recall",
        description="Search the lessons distilled from many notes about the user: short principles "
        "(1–3 sentences) such as how they like answers or what went wrong before. Best match first.",
        input_schema={"properties": {"query": QUERY, "k": k_schema(5)}},
        run=_distilled(Lesson, lesson_search, LessonOut, "lessons"),
    )
)
register(
    Tool(
        name="memory.procedures.recall",
        description="Search the procedures distilled from earlier conversations: a title and 2–8 "
        "steps of how something was done before (advice to follow or adapt; nothing is run). "
        "Best match first.",
        input_schema={"properties": {"query": QUERY, "k": k_schema(5)}},
        run=_distilled(Procedure, procedure_search, ProcedureOut, "procedures"),
    )
)
