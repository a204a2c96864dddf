"""Consent, retrieval, audit, counters and embeddings: mostly read-only records."""

from django.contrib import admin

from memory import models
from memory.admin.base import HistoryAdmin, truncate
from memoryweb.models import Counter, LiveEvent, TaskIntent


@admin.register(models.ConsentCategory)
class ConsentCategoryAdmin(HistoryAdmin):
    """Seeded by a data migration; the person sets their own policy in the dashboard."""

    list_display = ["slug", "name", "default_policy"]
    search_fields = ["slug", "name", "description"]


@admin.register(models.SubjectConsent)
class SubjectConsentAdmin(HistoryAdmin):
    list_display = ["subject", "category", "policy", "updated_at"]
    list_filter = ["policy", "category"]
    search_fields = ["subject__external_id"]
    list_select_related = ["subject__app", "category"]


@admin.register(models.PendingMemory)
class PendingMemoryAdmin(HistoryAdmin):
    """The person decides on these (dashboard or API), not the operator."""

    list_display = ["id", "subject", "kind", "category", "summary", "status", "created_at", "decided_at"]
    list_filter = ["status", "kind", "category", "subject__app"]
    search_fields = ["subject__external_id", "payload"]
    list_select_related = ["subject__app", "category"]
    date_hierarchy = "created_at"

    @admin.display(description="memory")
    def summary(self, obj):
        payload = obj.payload or {}
        if "key" in payload:
            return truncate(f"{payload.get('key')} = {payload.get('value', '')}")
        return truncate(str(payload.get("content", "")))


# --- retrieval, audit, counters, embeddings ----------------------------------------------------


@admin.register(models.RetrievalEvent)
class RetrievalEventAdmin(HistoryAdmin):
    list_display = [
        "created_at",
        "subject",
        "short_query",
        "mode",
        "profile",
        "from_cache",
        "item_count",
        "latency",
    ]
    list_filter = ["subject__app", "mode", "profile", "from_cache"]
    search_fields = ["query", "rewritten_query", "subject__external_id"]
    list_select_related = ["subject__app"]
    date_hierarchy = "created_at"
    show_full_result_count = False

    @admin.display(description="query")
    def short_query(self, obj):
        return truncate(obj.query)

    @admin.display(description="items")
    def item_count(self, obj):
        return len(obj.items or [])

    @admin.display(description="latency", ordering="latency_ms")
    def latency(self, obj):
        return f"{obj.latency_ms:.1f} ms"


@admin.register(models.ContextDelivery)
class ContextDeliveryAdmin(HistoryAdmin):
    list_display = ["conversation", "block", "digest", "updated_at"]
    list_filter = ["block"]
    search_fields = ["=conversation__id", "conversation__external_id"]
    list_select_related = ["conversation"]


@admin.register(models.ContextCacheEntry)
class ContextCacheEntryAdmin(HistoryAdmin):
    list_display = [
        "conversation",
        "policy_hash",
        "profile",
        "short_query",
        "hits",
        "built_at",
        "last_hit_at",
    ]
    list_filter = ["profile"]
    search_fields = ["=conversation__id", "conversation__external_id", "query"]
    list_select_related = ["conversation"]

    @admin.display(description="query")
    def short_query(self, obj):
        return truncate(obj.query)


@admin.register(models.AuditEvent)
class AuditEventAdmin(HistoryAdmin):
    list_display = [
        "created_at",
        "actor_kind",
        "actor_id",
        "action",
        "object_kind",
        "object_id",
        "app",
        "subject",
    ]
    list_filter = ["actor_kind", "action", "object_kind", "app"]
    search_fields = ["actor_id", "object_id", "action", "subject__external_id"]
    list_select_related = ["app", "subject__app"]
    date_hierarchy = "created_at"
    show_full_result_count = False


@admin.register(Counter)
class CounterAdmin(HistoryAdmin):
    list_display = ["name", "value", "updated_at"]
    search_fields = ["name"]


@admin.register(models.Embedding)
class EmbeddingAdmin(HistoryAdmin):
    list_display = ["kind", "item_id", "subject", "model_id", "dim", "created_at"]
    list_filter = ["model_id", "kind", "subject__app"]
    search_fields = ["=item_id", "model_id", "subject__external_id"]
    list_select_related = ["subject__app"]
    exclude = ["vector"]  # raw float32 bytes
    show_full_result_count = False


@admin.register(LiveEvent)
class LiveEventAdmin(HistoryAdmin):
    """The outbox of live dashboard updates (pruned by age)."""

    list_display = ["id", "event", "subject_id", "created_at"]
    list_filter = ["event"]
    search_fields = ["event", "=subject_id"]
    date_hierarchy = "created_at"
    show_full_result_count = False


@admin.register(TaskIntent)
class TaskIntentAdmin(HistoryAdmin):
    """The task outbox (memoryweb/outbox.py): tasks asked for, and whether the broker took
    them. Unsent rows are retried by the dispatcher; sent ones are pruned after a day."""

    list_display = ["id", "task", "args", "attempts", "created_at", "due_at", "sent_at"]
    list_filter = ["task", ("sent_at", admin.EmptyFieldListFilter)]
    search_fields = ["task", "last_error"]
    date_hierarchy = "created_at"
    show_full_result_count = False


@admin.register(models.JobRun)
class JobRunAdmin(HistoryAdmin):
    list_display = ["id", "kind", "key", "subject", "status", "lease_owner", "started_at", "finished_at"]
    list_filter = ["kind", "status"]
    search_fields = ["key", "lease_owner", "subject__external_id", "error"]
    list_select_related = ["subject__app"]
    date_hierarchy = "started_at"


@admin.register(models.AdminKey)
class AdminKeyAdmin(HistoryAdmin):
    """Operators' keys for /api/v1/admin/: minted and revoked with `manage.py admin_key`."""

    list_display = ["prefix", "name", "created_at", "last_used_at", "revoked_at"]
    search_fields = ["prefix", "name"]
    exclude = ["key_hash"]


@admin.register(models.MetricSnapshot)
class MetricSnapshotAdmin(HistoryAdmin):
    list_display = ["id", "app", "computed_at"]
    list_filter = ["app"]
    date_hierarchy = "computed_at"


@admin.register(models.SubjectAppPause)
class SubjectAppPauseAdmin(HistoryAdmin):
    """The person pauses and resumes an App's access on their dashboard's Apps page."""

    list_display = ["subject", "app", "paused_at", "paused_by"]
    list_filter = ["app"]
    search_fields = ["subject__external_id", "app__name"]
    list_select_related = ["subject__app", "app", "paused_by"]
