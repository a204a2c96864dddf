"""The chat playground's socket: /ws/s/<subject_id>/playground/.

It authenticates and checks ownership like every dashboard socket (memory/dashboard/consumers.py).
The client sends `{"message": "..."}`; the server answers with `{"type": "context", ...}` (what
the model is sent), `{"type": "chunk", "text"}` per piece of the reply, then
`{"type": "done", ...}` once the turn is stored (see chat/playground.py).
"""

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async

from chat.playground import TurnPrompt, playground_turn
from chat.views import context_panel
from memory.config import get_config
from memory.dashboard.consumers import (
    UNAUTHENTICATED,
    JsonConsumer,
    current_user,
    parse_subject_id,
    visible_subject,
)
from memory.dashboard.views.base import subjects_for
from memory.services.audit import Actor
from memoryweb.errors import MemorywebError


def _prompt_message(prompt: TurnPrompt, *, subject, config) -> dict:
    return {
        "type": "context",
        "html": context_panel(prompt, subject=subject, config=config),
        "model": prompt.model,
        "system": prompt.system,
        "messages": prompt.messages,
        "context": prompt.context,
    }


class PlaygroundConsumer(JsonConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=UNAUTHENTICATED)
            return
        subject_id = parse_subject_id(self.scope["url_route"]["kwargs"].get("subject_id"))
        subject = await database_sync_to_async(visible_subject)(user.pk, subject_id) if subject_id else None
        if subject is None:
            await self.close(code=4404)
            return
        self.user_id = user.pk
        self.subject_id = subject.pk
        await self.accept()

    async def receive_json(self, content, **kwargs):
        # Messages on one socket are handled in order: a message sent while a reply streams
        # starts its turn when that one is stored.
        text = content.get("message") if isinstance(content, dict) else None
        # Not thread-sensitive: a reply can stream for a while, and the one shared sync thread
        # also serves every Django view of this process.
        result = await database_sync_to_async(self._turn, thread_sensitive=False)(text)
        await self.send_json(result)

    def _turn(self, text) -> dict:
        """Run the turn in a worker thread, forwarding the prompt and chunks as they come."""
        user = current_user(self.user_id)
        subject = subjects_for(user).filter(pk=self.subject_id).first() if user else None
        if subject is None:  # lost access since the socket opened
            return {"type": "error", "error": "subject not found"}
        send = async_to_sync(self.send_json)
        config = get_config(subject.app)
        try:
            result = playground_turn(
                subject=subject,
                text=text,
                actor=Actor.user(user),
                config=config,
                on_prompt=lambda prompt: send(_prompt_message(prompt, subject=subject, config=config)),
                on_chunk=lambda chunk: send({"type": "chunk", "text": chunk}),
            )
        except MemorywebError as exc:
            return {"type": "error", "error": exc.message, "field": exc.field}
        return {
            "type": "done",
            "reply": result.reply,
            "answered": result.answered,
            "model": result.prompt.model,
            "truncated": result.truncated,
            "failed": result.failed,
            "user_message_id": result.user_message.pk,
            "reply_message_id": result.reply_message.pk if result.reply_message else None,
        }
