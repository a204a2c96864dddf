"""Rows for the phase 2 tests: extractions written as phase 1 leaves them, on conversations
whose watermark is current (so a run extracts nothing new and only phase 2 has work)."""

from datetime import timedelta

from django.utils import timezone

from chat.summaries.blocks import render_block
from memory.config import get_config
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.documents import session_extraction_write

LOCAL = {"memory": {"backend": "local", "memories": {"minRolloutIdleHours": 0}}}


def backend_on(app, actor, **memory):
    """Turn the App's session summaries on (plus any other `memory` settings); its config."""
    config = {"memory": {**LOCAL["memory"], **memory}}
    app_config_set(app=app, config=config, actor=actor)
    return get_config(app)


def extraction_write(
    subject, actor, external_id, title, sections, *, days_ago, synopsis="", scope="", working_dir=""
):
    """A conversation with one message `days_ago` days old and its extraction of `sections`."""
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id=external_id, scope=scope, working_dir=working_dir, actor=actor
    )
    when = timezone.now() - timedelta(days=days_ago)
    message, _ = message_add(
        conversation=conversation, role="user", text=title, occurred_at=when, actor=actor
    )
    return session_extraction_write(
        conversation=conversation,
        watermark_message_id=message.pk,
        message_count=1,
        last_message_at=when,
        title=title,
        synopsis=synopsis or f"About {title.lower()}.",
        raw_memory=render_block(sections),
        method="heuristic",
    )
