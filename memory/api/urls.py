from django.urls import path

from chat import api as chat_api
from memory.api import views

urlpatterns = [
    path("context", views.ContextApi.as_view(), name="api-context"),
    path("conversations", chat_api.ConversationsApi.as_view(), name="api-conversations"),
    path("conversations/<int:conversation_id>", chat_api.ConversationApi.as_view(), name="api-conversation"),
    path("conversations/<int:conversation_id>/messages", chat_api.MessagesApi.as_view(), name="api-messages"),
    path(
        "conversations/<int:conversation_id>/responses", chat_api.ResponsesApi.as_view(), name="api-responses"
    ),
    path("subjects/<str:subject>/profile", views.ProfileApi.as_view(), name="api-profile"),
    path("subjects/<str:subject>/profile/<str:key>", views.ProfileKeyApi.as_view(), name="api-profile-key"),
    path(
        "subjects/<str:subject>/profile/<str:key>/history",
        views.ProfileHistoryApi.as_view(),
        name="api-profile-history",
    ),
    path("subjects/<str:subject>/notes", views.NotesApi.as_view(), name="api-notes"),
    path("subjects/<str:subject>/notes/<int:note_id>", views.NoteApi.as_view(), name="api-note"),
    path("subjects/<str:subject>/votes", views.VotesApi.as_view(), name="api-votes"),
]
