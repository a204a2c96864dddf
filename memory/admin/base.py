"""Shared pieces of the memory admin: read-only history admins and the audited actor."""

from django.contrib import admin

from memory.services import (
    Actor,
)


def admin_actor(request) -> Actor:
    return Actor.user(request.user)


def truncate(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class HistoryAdmin(admin.ModelAdmin):
    """Rows written by the services and tasks, kept as history: readable, never edited here.

    `deletable` admins delete through a service (forget a note, delete a lesson), which
    audits it; `actionable` ones allow change permission only so their actions can run.
    """

    deletable = False
    actionable = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return self.actionable and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self.deletable and super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        if self.actionable:  # change permission is for the actions: every field stays read-only
            return [f.name for f in self.model._meta.fields if f.name not in (self.exclude or ())]
        return super().get_readonly_fields(request, obj)


class ServiceDeleteMixin:
    """Deletion through a service (`delete_model`, `delete_queryset`), which also removes the
    history that belongs to the object. The rows it cascades to are read-only in the admin, so
    Django would refuse the delete for lack of permission on them: that check is lifted here."""

    delete_related: tuple[str, ...] = ("subject",)  # what delete_queryset loads with each row

    def service_delete(self, request, obj) -> None:
        raise NotImplementedError

    def delete_model(self, request, obj):
        self.service_delete(request, obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset.select_related(*self.delete_related):
            self.service_delete(request, obj)

    def get_deleted_objects(self, objs, request):
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)  # type: ignore[misc]
        return deleted, counts, set(), protected


class HistoryInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# --- apps and keys ------------------------------------------------------------------------
