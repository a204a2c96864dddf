"""chat's REST endpoints (under /api/v1/, beside memory's; memoryweb/urls.py mounts both)."""

from django.urls import path

from chat import api

urlpatterns = [
    path("flush", api.FlushApi.as_view(), name="api-flush"),
    path("conversations", api.ConversationsApi.as_view(), name="api-conversations"),
    path("conversations/<int:conversation_id>", api.ConversationApi.as_view(), name="api-conversation"),
    path("conversations/<int:conversation_id>/messages", api.MessagesApi.as_view(), name="api-messages"),
    path("conversations/<int:conversation_id>/responses", api.ResponsesApi.as_view(), name="api-responses"),
]
