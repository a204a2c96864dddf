"""The Django admin for conversations and messages: read-only history. Messages are written by
the sidecar and the playground through memory.services.conversations."""

from django.contrib import admin
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html

from memory.admin.base import HistoryAdmin, truncate
from memory.models import Conversation, ConversationTopic, Message


@admin.register(Conversation)
class ConversationAdmin(HistoryAdmin):
    list_display = ["id", "subject", "external_id", "mode", "scope", "message_count", "updated_at"]
    list_filter = ["mode", "subject__app"]
    search_fields = ["external_id", "subject__external_id", "scope", "working_dir"]
    list_select_related = ["subject__app"]
    date_hierarchy = "updated_at"
    readonly_fields = ["messages_link"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_messages=Count("messages"))

    @admin.display(description="messages", ordering="_messages")
    def message_count(self, obj):
        return obj._messages

    # a LoCoMo conversation holds hundreds of messages: a filtered list, not an inline
    @admin.display(description="messages")
    def messages_link(self, obj):
        url = reverse("admin:memory_message_changelist")
        return format_html(
            '<a href="{}?conversation__id__exact={}">{} messages</a>', url, obj.pk, obj._messages
        )


@admin.register(Message)
class MessageAdmin(HistoryAdmin):
    list_display = ["id", "conversation", "role", "short_text", "occurred_at", "external_id"]
    list_filter = ["role", "conversation__subject__app"]
    search_fields = ["text", "external_id", "=conversation__id"]
    list_select_related = ["conversation"]
    date_hierarchy = "occurred_at"
    show_full_result_count = False

    @admin.display(description="text")
    def short_text(self, obj):
        return truncate(obj.text)


@admin.register(ConversationTopic)
class ConversationTopicAdmin(HistoryAdmin):
    list_display = ["conversation", "label", "status", "weight", "mentions", "updated_at"]
    list_filter = ["status"]
    search_fields = ["label", "=conversation__id", "conversation__external_id"]
    list_select_related = ["conversation"]
