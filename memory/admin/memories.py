"""Facts, notes, evidence, links, votes, lessons and procedures."""

from django.contrib import admin
from django.utils.html import format_html

from memory import models
from memory.admin.base import HistoryAdmin, HistoryInline, ServiceDeleteMixin, admin_actor, truncate
from memory.services import (
    note_forget,
)
from memory.services.evidence import evidence_forget
from memory.services.lessons import lesson_delete, procedure_delete


class NoteColumns:
    """The notes' and note versions' list columns: the content wrapped (its full text on hover,
    static/css/admin.css) so the table fits 1366 px, and short tags, votes, archived, date."""

    class Media:
        css = {"all": ["css/admin.css"]}

    @admin.display(description="content")
    def short_content(self, obj):
        return format_html(
            '<span class="mw-content" title="{}">{}</span>',
            truncate(obj.content, 500),
            truncate(obj.content, 160),
        )

    @admin.display(description="tags")
    def tag_list(self, obj):
        return truncate(", ".join(obj.tags or []), 40)

    @admin.display(description="votes · recalls")
    def votes_and_recalls(self, obj):
        return f"{obj.vote_score:.2f} · {obj.recall_count}"

    @admin.display(description="archived", boolean=True, ordering="archived_at")
    def is_archived(self, obj):
        return obj.archived_at is not None

    @admin.display(description="created", ordering="created_at")
    def created_on(self, obj):
        return obj.created_at.date().isoformat()


@admin.register(models.ProfileFact)
class ProfileFactAdmin(HistoryAdmin):
    """Every version of every fact: a set supersedes, a remove closes, nothing is rewritten."""

    list_display = ["key", "short_value", "subject", "pinned", "category", "origin", "valid_from", "valid_to"]
    list_filter = [
        ("valid_to", admin.EmptyFieldListFilter),
        "pinned",
        "origin",
        "category",
        "subject__app",
    ]
    search_fields = ["key", "value", "subject__external_id"]
    list_select_related = ["subject__app"]
    date_hierarchy = "valid_from"

    @admin.display(description="value")
    def short_value(self, obj):
        return truncate(obj.value)


class NoteVersionInline(HistoryInline):
    model = models.NoteVersion
    fields = readonly_fields = ("version", "content", "tags", "origin", "created_at")
    show_change_link = False


class NoteSourceInline(HistoryInline):
    model = models.NoteSource
    fields = readonly_fields = ("conversation", "message", "created_at")
    show_change_link = False


@admin.register(models.Note)
class NoteAdmin(NoteColumns, ServiceDeleteMixin, HistoryAdmin):
    # few, narrow columns so the content gets the room and the table fits 1366 px beside the
    # filters: the gist wraps (the whole text is its tooltip), votes and recalls share a column
    list_display = [
        "id",
        "short_content",
        "subject",
        "tag_list",
        "category",
        "votes_and_recalls",
        "is_archived",
        "created_on",
    ]
    list_filter = [
        ("archived_at", admin.EmptyFieldListFilter),
        "origin",
        "category",
        "subject__app",
    ]
    search_fields = ["content", "subject__external_id"]
    list_select_related = ["subject__app"]
    date_hierarchy = "created_at"
    show_full_result_count = False  # a subject may hold 100k notes
    inlines = [NoteVersionInline, NoteSourceInline]
    deletable = True  # deleting is "forget", through note_forget

    def service_delete(self, request, obj):
        note_forget(note=obj, actor=admin_actor(request))


@admin.register(models.Evidence)
class EvidenceAdmin(ServiceDeleteMixin, HistoryAdmin):
    """The turns as memories. Deleting is "forget" (evidence_forget): the text goes, a row
    without it stays so the turn is not written again."""

    list_display = [
        "id",
        "subject",
        "role",
        "short_text",
        "category",
        "status",
        "recall_count",
        "occurred_at",
    ]
    list_filter = ["status", "role", "category", ("archived_at", admin.EmptyFieldListFilter), "subject__app"]
    search_fields = ["text", "subject__external_id"]
    list_select_related = ["subject__app"]
    date_hierarchy = "occurred_at"
    show_full_result_count = False  # one per message
    raw_id_fields = ["message", "conversation"]
    deletable = True

    @admin.display(description="text")
    def short_text(self, obj):
        return truncate(obj.text)

    def service_delete(self, request, obj):
        evidence_forget(evidence=obj, actor=admin_actor(request))


@admin.register(models.NoteVersion)
class NoteVersionAdmin(NoteColumns, HistoryAdmin):
    list_display = ["note", "version", "short_content", "origin", "created_at"]
    list_filter = ["origin"]
    search_fields = ["content", "=note__id"]
    list_select_related = ["note"]
    show_full_result_count = False


@admin.register(models.NoteSource)
class NoteSourceAdmin(HistoryAdmin):
    list_display = ["note", "conversation", "message", "created_at"]
    search_fields = ["=note__id", "=message__id"]
    list_select_related = ["note", "conversation", "message"]
    show_full_result_count = False


@admin.register(models.NoteLink)
class NoteLinkAdmin(HistoryAdmin):
    list_display = ["src", "kind", "dst", "weight", "origin", "created_at"]
    list_filter = ["kind", "origin", "src__subject__app"]
    search_fields = ["=src__id", "=dst__id", "src__content", "src__subject__external_id"]
    list_select_related = ["src", "dst"]
    show_full_result_count = False


@admin.register(models.VoteEvent)
class VoteEventAdmin(HistoryAdmin):
    list_display = ["created_at", "subject", "item_kind", "item_id", "signal", "delta", "actor"]
    list_filter = ["signal", "item_kind", "subject__app"]
    search_fields = ["actor", "subject__external_id", "=item_id"]
    list_select_related = ["subject__app"]
    date_hierarchy = "created_at"


# --- lessons and procedures -------------------------------------------------------------------


class LessonVersionInline(HistoryInline):
    model = models.LessonVersion
    fields = readonly_fields = ("version", "text", "tags", "origin", "created_at")
    show_change_link = False


@admin.register(models.Lesson)
class LessonAdmin(ServiceDeleteMixin, HistoryAdmin):
    list_display = [
        "id",
        "subject",
        "short_text",
        "vote_score",
        "recall_count",
        "distiller",
        "version",
        "created_at",
    ]
    list_filter = ["distiller", "origin", "subject__app"]
    search_fields = ["text", "subject__external_id"]
    list_select_related = ["subject__app"]
    date_hierarchy = "created_at"
    inlines = [LessonVersionInline]
    deletable = True

    @admin.display(description="text")
    def short_text(self, obj):
        return truncate(obj.text)

    def service_delete(self, request, obj):
        lesson_delete(lesson=obj, actor=admin_actor(request))


@admin.register(models.LessonVersion)
class LessonVersionAdmin(HistoryAdmin):
    list_display = ["lesson", "version", "origin", "created_at"]
    search_fields = ["text", "=lesson__id"]
    list_select_related = ["lesson"]


class ProcedureVersionInline(HistoryInline):
    model = models.ProcedureVersion
    fields = readonly_fields = ("version", "title", "steps", "origin", "created_at")
    show_change_link = False


@admin.register(models.Procedure)
class ProcedureAdmin(ServiceDeleteMixin, HistoryAdmin):
    list_display = [
        "id",
        "subject",
        "title",
        "step_count",
        "vote_score",
        "distiller",
        "version",
        "created_at",
    ]
    list_filter = ["distiller", "origin", "subject__app"]
    search_fields = ["title", "steps", "subject__external_id"]
    list_select_related = ["subject__app"]
    date_hierarchy = "created_at"
    inlines = [ProcedureVersionInline]
    deletable = True

    @admin.display(description="steps")
    def step_count(self, obj):
        return len(obj.steps or [])

    def service_delete(self, request, obj):
        procedure_delete(procedure=obj, actor=admin_actor(request))


@admin.register(models.ProcedureVersion)
class ProcedureVersionAdmin(HistoryAdmin):
    list_display = ["procedure", "version", "title", "origin", "created_at"]
    search_fields = ["title", "=procedure__id"]
    list_select_related = ["procedure"]


# --- consent --------------------------------------------------------------------------------


# --- session summaries (chat/summaries/): written by the pipeline, read here --------------------


@admin.register(models.SessionExtraction)
class SessionExtractionAdmin(HistoryAdmin):
    """Phase 1's raw memory of each conversation. Read-only: `manage.py memory clear` (or the
    REST twin) deletes them, and the next run writes them again."""

    list_display = ["id", "subject", "conversation", "title", "method", "message_count", "last_message_at"]
    list_filter = ["method", "subject__app"]
    search_fields = ["title", "synopsis", "raw_memory", "subject__external_id"]
    list_select_related = ["subject__app", "conversation"]
    raw_id_fields = ["conversation", "run"]
    date_hierarchy = "last_message_at"


class MemoryDocumentVersionInline(HistoryInline):
    model = models.MemoryDocumentVersion
    fields = readonly_fields = ("number", "method", "digest", "input_tokens", "output_tokens", "created_at")
    show_change_link = True


@admin.register(models.MemoryDocument)
class MemoryDocumentAdmin(HistoryAdmin):
    """MEMORY.md, the injected summary, skills and mental models, each with its versions."""

    list_display = [
        "id",
        "subject",
        "kind",
        "scope",
        "path",
        "current",
        "auto_refresh",
        "pruned_at",
        "updated_at",
    ]
    list_filter = ["kind", "auto_refresh", ("pruned_at", admin.EmptyFieldListFilter), "subject__app"]
    search_fields = ["path", "name", "description", "scope", "subject__external_id"]
    list_select_related = ["subject__app", "current"]
    raw_id_fields = ["current"]
    inlines = [MemoryDocumentVersionInline]


@admin.register(models.MemoryDocumentVersion)
class MemoryDocumentVersionAdmin(HistoryAdmin):
    list_display = ["id", "document", "number", "method", "created_at"]
    list_filter = ["method", "document__kind"]
    search_fields = ["content", "document__path", "document__subject__external_id"]
    list_select_related = ["document__subject__app"]
    raw_id_fields = ["document", "run"]
