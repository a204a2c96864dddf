"""The Django admin for job runs and declined clusters: history written by the workers,
read-only here. "Consolidate now" is an action on subjects (memory/admin/tenants.py)."""

from django.contrib import admin

from consolidation.models import DeclinedCluster, JobRun
from memory.admin.base import HistoryAdmin


@admin.register(JobRun)
class JobRunAdmin(HistoryAdmin):
    list_display = ["id", "kind", "key", "subject", "status", "lease_owner", "started_at", "finished_at"]
    list_filter = ["kind", "status"]
    search_fields = ["key", "lease_owner", "subject__external_id", "error"]
    list_select_related = ["subject__app"]
    date_hierarchy = "started_at"


@admin.register(DeclinedCluster)
class DeclinedClusterAdmin(HistoryAdmin):
    list_display = ["subject", "size", "distiller", "signature", "created_at"]
    list_filter = ["distiller"]
    search_fields = ["subject__external_id", "signature"]
    list_select_related = ["subject__app"]
    date_hierarchy = "created_at"
