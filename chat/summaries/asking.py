"""The one way the pipeline's steps (phase 1, phase 2, mental models) ask a `summaries` model."""

from memory.tokens import estimate_tokens
from memoryweb.llm.templates import prompt_schema, render_prompt


def model_answer(
    client, *, prompt: str, variables: dict, max_tokens: int, system: str | None = None
) -> tuple[dict | None, int]:
    """The JSON answer to the template `prompt` (checked against its schema), with the template
    `system` (no variables) as the system prompt when given; None after a counted fallback.
    Also returns the estimated input tokens of what was sent."""
    system_text = render_prompt(system, {}) if system else None
    answer = client.complete_json(
        prompt=prompt,
        variables=variables,
        schema=prompt_schema(prompt),
        system=system_text,
        max_tokens=max_tokens,
    )
    sent = estimate_tokens(render_prompt(prompt, variables)) + (
        estimate_tokens(system_text) if system_text else 0
    )
    return answer, sent
