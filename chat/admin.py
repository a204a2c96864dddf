"""The Django admin for reflection runs: read-only history."""

from django.contrib import admin

from chat.models import ReflectionRun
from memory.admin.base import HistoryAdmin


@admin.register(ReflectionRun)
class ReflectionRunAdmin(HistoryAdmin):
    list_display = ["id", "conversation", "status", "through_message_id", "created_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["=conversation__id", "conversation__subject__external_id", "error"]
    list_select_related = ["conversation"]
    date_hierarchy = "created_at"
    show_full_result_count = False
