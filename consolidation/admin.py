"""The Django admin for declined clusters (history written by the workers, read-only here), and
the "consolidate now" action on subjects, added to the memory app's SubjectAdmin."""

from django.contrib import admin, messages

from consolidation.models import DeclinedCluster
from consolidation.services import consolidation_request
from memory.admin.base import HistoryAdmin, admin_actor
from memory.admin.tenants import SubjectAdmin
from memory.models import Subject
from memoryweb.errors import FeatureDisabled


class ConsolidatingSubjectAdmin(SubjectAdmin):
    actions = [*SubjectAdmin.actions, "consolidate_now"]

    @admin.action(description="Consolidate now (distil linked notes into lessons)", permissions=["change"])
    def consolidate_now(self, request, queryset):
        """Queue a run per subject and answer at once; the job runs list shows how each ended."""
        for subject in queryset.select_related("app"):
            try:
                run = consolidation_request(subject=subject, actor=admin_actor(request))
            except FeatureDisabled as exc:
                self.message_user(request, f"{subject}: {exc.message}.", level=messages.WARNING)
                continue
            self.message_user(request, f"{subject}: consolidation queued (job run {run.pk}).")


# the memory app registers subjects; consolidation adds its action to that admin
admin.site.unregister(Subject)
admin.site.register(Subject, ConsolidatingSubjectAdmin)


@admin.register(DeclinedCluster)
class DeclinedClusterAdmin(HistoryAdmin):
    list_display = ["subject", "size", "distiller", "signature", "created_at"]
    list_filter = ["distiller"]
    search_fields = ["subject__external_id", "signature"]
    list_select_related = ["subject__app"]
    date_hierarchy = "created_at"
