"""Websocket routes (mounted by memoryweb/asgi.py behind session auth and an origin check)."""

from django.urls import path

from chat.consumers import PlaygroundConsumer
from memory.dashboard.consumers import LiveConsumer

websocket_urlpatterns = [
    path("ws/live/", LiveConsumer.as_asgi()),
    path("ws/s/<int:subject_id>/playground/", PlaygroundConsumer.as_asgi()),
]
