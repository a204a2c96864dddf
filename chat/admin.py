from django.contrib import admin

from chat.models import Conversation, Message


class MessageInline(admin.TabularInline):
    model = Message
    fields = readonly_fields = ("role", "text", "occurred_at", "external_id")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["id", "subject", "external_id", "mode", "scope", "updated_at"]
    list_filter = ["mode", "subject__app"]
    search_fields = ["external_id", "subject__external_id"]
    readonly_fields = ["subject"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["id", "conversation", "role", "short_text", "occurred_at"]
    list_filter = ["role"]
    search_fields = ["text", "external_id"]

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:80]
