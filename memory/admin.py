from django.contrib import admin

from memory import models


class ReadOnlyAdmin(admin.ModelAdmin):
    """History is append-only: the admin may read it, never change it."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ApiKeyInline(admin.TabularInline):
    model = models.ApiKey
    fields = readonly_fields = ("prefix", "name", "created_at", "last_used_at", "revoked_at")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False  # keys are minted by `manage.py createapp NAME --key-only`, shown once


@admin.register(models.App)
class AppAdmin(admin.ModelAdmin):
    list_display = ["name", "paused", "created_at"]
    list_filter = ["paused"]
    search_fields = ["name"]
    inlines = [ApiKeyInline]


@admin.register(models.Subject)
class SubjectAdmin(admin.ModelAdmin):
    list_display = ["external_id", "app", "owner", "created_at"]
    list_filter = ["app"]
    search_fields = ["external_id", "display_name"]
    raw_id_fields = ["owner"]


@admin.register(models.ProfileFact)
class ProfileFactAdmin(ReadOnlyAdmin):
    list_display = ["key", "value", "subject", "pinned", "valid_from", "valid_to", "origin"]
    list_filter = ["pinned", "origin", "subject__app"]
    search_fields = ["key", "value", "subject__external_id"]


class NoteVersionInline(admin.TabularInline):
    model = models.NoteVersion
    fields = readonly_fields = ("version", "content", "tags", "origin", "created_at")
    extra = 0
    can_delete = False


@admin.register(models.Note)
class NoteAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "subject",
        "short_content",
        "vote_score",
        "recall_count",
        "archived_at",
        "created_at",
    ]
    list_filter = ["origin", "subject__app", ("archived_at", admin.EmptyFieldListFilter)]  # type: ignore[list-item]
    search_fields = ["content", "subject__external_id"]
    inlines = [NoteVersionInline]

    @admin.display(description="content")
    def short_content(self, obj):
        return obj.content[:80]


@admin.register(models.NoteLink)
class NoteLinkAdmin(ReadOnlyAdmin):
    list_display = ["src", "kind", "dst", "weight", "origin"]
    list_filter = ["kind", "origin"]


@admin.register(models.VoteEvent)
class VoteEventAdmin(ReadOnlyAdmin):
    list_display = ["item_kind", "item_id", "signal", "delta", "actor", "created_at"]
    list_filter = ["signal", "item_kind"]


@admin.register(models.RetrievalEvent)
class RetrievalEventAdmin(ReadOnlyAdmin):
    list_display = ["subject", "query", "latency_ms", "from_cache", "created_at"]
    list_filter = ["from_cache", "subject__app"]
    search_fields = ["query", "subject__external_id"]


@admin.register(models.AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor_kind", "actor_id", "action", "object_kind", "object_id", "app"]
    list_filter = ["actor_kind", "action", "app"]
    search_fields = ["actor_id", "object_id", "action"]
