"""chat's REST endpoints (under /api/v1/, beside memory's; memoryweb/urls.py mounts both)."""

from django.urls import path

from chat import api, memory_api

MEMORY = "subjects/<str:subject>/memory"

urlpatterns = [
    path("flush", api.FlushApi.as_view(), name="api-flush"),
    path("conversations", api.ConversationsApi.as_view(), name="api-conversations"),
    path("conversations/<int:conversation_id>", api.ConversationApi.as_view(), name="api-conversation"),
    path("conversations/<int:conversation_id>/messages", api.MessagesApi.as_view(), name="api-messages"),
    path("conversations/<int:conversation_id>/responses", api.ResponsesApi.as_view(), name="api-responses"),
    # the `/memory` slash commands (manage.py memory …)
    path(f"{MEMORY}/view", memory_api.MemoryViewApi.as_view(), name="api-memory-view"),
    path(f"{MEMORY}/stats", memory_api.MemoryStatsApi.as_view(), name="api-memory-stats"),
    path(f"{MEMORY}/diagnose", memory_api.MemoryDiagnoseApi.as_view(), name="api-memory-diagnose"),
    path(f"{MEMORY}/clear", memory_api.MemoryClearApi.as_view(), name="api-memory-clear"),
    path(f"{MEMORY}/reset", memory_api.MemoryResetApi.as_view(), name="api-memory-reset"),
    path(f"{MEMORY}/enqueue", memory_api.MemoryEnqueueApi.as_view(), name="api-memory-enqueue"),
    path(f"{MEMORY}/rebuild", memory_api.MemoryRebuildApi.as_view(), name="api-memory-rebuild"),
    path(f"{MEMORY}/reload", memory_api.MemoryReloadApi.as_view(), name="api-memory-reload"),
    path(f"{MEMORY}/mental-models", memory_api.MentalModelsApi.as_view(), name="api-mental-models"),
    # before <name>: "seed" and "refresh" are not model names (mental_models.RESERVED_NAMES)
    path(
        f"{MEMORY}/mental-models/seed",
        memory_api.MentalModelsSeedApi.as_view(),
        name="api-mental-models-seed",
    ),
    path(
        f"{MEMORY}/mental-models/refresh",
        memory_api.MentalModelsRefreshApi.as_view(),
        name="api-mental-models-refresh",
    ),
    path(f"{MEMORY}/mental-models/<str:name>", memory_api.MentalModelApi.as_view(), name="api-mental-model"),
    path(
        f"{MEMORY}/mental-models/<str:name>/refresh",
        memory_api.MentalModelRefreshApi.as_view(),
        name="api-mental-model-refresh",
    ),
    path(
        f"{MEMORY}/mental-models/<str:name>/history",
        memory_api.MentalModelHistoryApi.as_view(),
        name="api-mental-model-history",
    ),
]
