"""Beliefs and the person (issue 13): revisions, interaction contracts, conversation states
and consequence chains. Read-only here: the revision engine, observation and the person
(dashboard, REST) write them through memory/services."""

from django.contrib import admin

from memory.admin.base import HistoryAdmin
from memory.models import BeliefRevision, Consequence, ConversationState, InteractionContract


@admin.register(BeliefRevision)
class BeliefRevisionAdmin(HistoryAdmin):
    list_display = ["id", "subject", "action", "belief_kind", "belief_id", "decided_by", "created_at"]
    list_filter = ["action", "belief_kind", "decided_by"]
    search_fields = ["reason", "=subject__external_id", "=belief_id"]
    list_select_related = ["subject"]
    date_hierarchy = "created_at"


@admin.register(InteractionContract)
class InteractionContractAdmin(HistoryAdmin):
    list_display = ["subject", "mode", "observations", "updated_at"]
    list_filter = ["mode"]
    search_fields = ["=subject__external_id", "mode"]
    list_select_related = ["subject"]


@admin.register(ConversationState)
class ConversationStateAdmin(HistoryAdmin):
    list_display = ["conversation", "urgency", "focus", "frustration", "messages", "updated_at"]
    search_fields = ["=conversation__id", "conversation__external_id"]
    list_select_related = ["conversation"]


@admin.register(Consequence)
class ConsequenceAdmin(HistoryAdmin):
    list_display = ["id", "subject", "outcome", "action", "tendency", "surfaced_count", "created_at"]
    list_filter = ["outcome", "origin"]
    search_fields = ["action", "outcome_text", "tendency", "=subject__external_id"]
    list_select_related = ["subject"]
    date_hierarchy = "created_at"
