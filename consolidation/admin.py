from django.contrib import admin

from consolidation.models import DeclinedCluster, JobRun


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    """Job runs are history written by the workers: read-only here."""

    list_display = ["key", "kind", "status", "lease_owner", "started_at", "finished_at"]
    list_filter = ["kind", "status"]
    search_fields = ["key", "lease_owner"]
    date_hierarchy = "started_at"
    raw_id_fields = ["subject"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(DeclinedCluster)
class DeclinedClusterAdmin(admin.ModelAdmin):
    list_display = ["subject", "size", "distiller", "created_at"]
    raw_id_fields = ["subject"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
