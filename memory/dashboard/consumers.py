"""The live-updates socket of dashboard pages, and what every dashboard socket shares.

It authenticates on connect (the dashboard session, via AuthMiddlewareStack in asgi.py) and
refuses anonymous sockets. Cross-site sockets are refused by AllowedHostsOriginValidator, which
is what stands in for CSRF on a websocket.

/ws/live/ — the client sends `{"action": "subscribe", "subject_id": 12}` for a subject the user
owns (staff: any); staff also receive events without a subject. Every event is checked again
before it is forwarded (the subject may have changed owner, the user may have lost staff
status), so a socket never outlives its access. Server messages:
`{"type": "subscribed", "subject_id"}`, `{"type": "event", "event", "subject_id", "payload"}`,
`{"type": "error", "error"}`.
"""

import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth import get_user_model

from memory.boundary import redact_inbound
from memory.dashboard.views.base import subjects_for
from memory.models import Subject
from memoryweb.live import STAFF_GROUP, outbox_in_use, outbox_poller, subject_group

UNAUTHENTICATED = 4401  # close code: the socket was opened without a dashboard session
MAX_SUBSCRIPTIONS = 50


def current_user(user_id: int):
    """The user as the database has it now (active only), or None."""
    return get_user_model().objects.filter(pk=user_id, is_active=True).first()


def visible_subject(user_id: int, subject_id: int) -> Subject | None:
    user = current_user(user_id)
    if user is None:
        return None
    return subjects_for(user).filter(pk=subject_id).first()


def _is_staff(user_id: int) -> bool:
    user = current_user(user_id)
    return bool(user and user.is_staff)


def parse_subject_id(value) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


class JsonConsumer(AsyncJsonWebsocketConsumer):
    """A frame that is not JSON reaches `receive_json` as None instead of closing the socket;
    one that is reaches it with every secret redacted (memory/boundary.py)."""

    @classmethod
    async def decode_json(cls, text_data):
        try:
            content = json.loads(text_data)
        except ValueError:
            return None
        return await database_sync_to_async(redact_inbound)(content)


class LiveConsumer(JsonConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=UNAUTHENTICATED)
            return
        self.user_id = user.pk
        self.subject_ids: set[int] = set()
        self.staff = False
        self.polling = False
        if outbox_in_use():
            await outbox_poller().attach()
            self.polling = True
        if user.is_staff:
            await self.channel_layer.group_add(STAFF_GROUP, self.channel_name)
            self.staff = True
        await self.accept()

    async def disconnect(self, code):
        if not hasattr(self, "user_id"):
            return
        for subject_id in self.subject_ids:
            await self.channel_layer.group_discard(subject_group(subject_id), self.channel_name)
        if self.staff:
            await self.channel_layer.group_discard(STAFF_GROUP, self.channel_name)
        if self.polling:
            outbox_poller().detach()
            self.polling = False

    async def receive_json(self, content, **kwargs):
        action = content.get("action") if isinstance(content, dict) else None
        if action not in ("subscribe", "unsubscribe"):
            await self.send_json({"type": "error", "error": "action must be subscribe or unsubscribe"})
            return
        subject_id = parse_subject_id(content.get("subject_id"))
        if subject_id is None:
            await self.send_json({"type": "error", "error": "subject_id must be a positive integer"})
            return
        if action == "unsubscribe":
            if subject_id in self.subject_ids:
                self.subject_ids.discard(subject_id)
                await self.channel_layer.group_discard(subject_group(subject_id), self.channel_name)
            await self.send_json({"type": "unsubscribed", "subject_id": subject_id})
            return
        if len(self.subject_ids) >= MAX_SUBSCRIPTIONS and subject_id not in self.subject_ids:
            await self.send_json(
                {"type": "error", "error": f"at most {MAX_SUBSCRIPTIONS} subjects per socket"}
            )
            return
        if await database_sync_to_async(visible_subject)(self.user_id, subject_id) is None:
            # the same answer for a missing subject and someone else's: ids cannot be probed
            await self.send_json({"type": "error", "error": "subject not found", "subject_id": subject_id})
            return
        self.subject_ids.add(subject_id)
        await self.channel_layer.group_add(subject_group(subject_id), self.channel_name)
        await self.send_json({"type": "subscribed", "subject_id": subject_id})

    async def live_event(self, message):
        subject_id = message.get("subject_id")
        if subject_id is None:
            allowed = self.staff and await database_sync_to_async(_is_staff)(self.user_id)
        else:
            allowed = (
                subject_id in self.subject_ids
                and await database_sync_to_async(visible_subject)(self.user_id, subject_id) is not None
            )
            if not allowed and subject_id in self.subject_ids:
                self.subject_ids.discard(subject_id)
                await self.channel_layer.group_discard(subject_group(subject_id), self.channel_name)
        if allowed:
            await self.send_json(
                {
                    "type": "event",
                    "event": message["event"],
                    "subject_id": subject_id,
                    "payload": message.get("payload") or {},
                }
            )
