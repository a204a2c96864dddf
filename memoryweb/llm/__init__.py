"""One small interface to the language models behind reflection, the query rewriter,
consolidation, session summaries and the chat playground (DESIGN §8).

    client = client_for("reflection", config)          # None: use the heuristic path
    if client is not None:
        result = client.complete_json(component="reflection", prompt="reflection",
                                      variables={...}, schema=prompt_schema("reflection"))
        # result is a dict that matches the schema, or None (fallback logged and counted)
"""

from memoryweb.llm.client import (
    LLMClient,
    TextResult,
    TextStream,
    client_for,
    set_http_client_factory,
)
from memoryweb.llm.spec import COMPONENTS, LLMSpec, parse_spec, provider_status
from memoryweb.llm.templates import prompt_names, prompt_schema, render_prompt, template_variables

__all__ = [
    "COMPONENTS",
    "LLMClient",
    "LLMSpec",
    "TextResult",
    "TextStream",
    "client_for",
    "parse_spec",
    "prompt_names",
    "prompt_schema",
    "provider_status",
    "render_prompt",
    "set_http_client_factory",
    "template_variables",
]
