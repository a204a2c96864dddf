"""Apps, API keys and subjects: the tenant side of the admin, with its actions."""

import io
import json
import re
import zipfile
from datetime import timedelta
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html_join

from memory import models
from memory.admin.base import HistoryAdmin, HistoryInline, ServiceDeleteMixin, admin_actor
from memory.config import get_config, validate_app_config
from memory.models import Conversation
from memory.selectors import subject_export
from memory.services import (
    api_key_revoke,
    app_config_set,
    app_create,
    audit_record,
    subject_delete,
)
from memory.services.apps import (
    api_key_rate_limit_set,
    api_key_rotate,
    app_pause,
    app_resume,
    subject_update,
)
from memory.services.embeddings import embeddings_enabled, reembed
from memoryweb.errors import MemorywebError
from memoryweb.ratelimit import parse_rate


class AppForm(forms.ModelForm):
    class Meta:
        model = models.App
        fields = ["name", "config"]

    def clean_config(self):
        config = self.cleaned_data.get("config") or {}
        try:
            validate_app_config(config)
        except MemorywebError as exc:
            raise ValidationError(exc.message) from exc
        return config


class ApiKeyInline(HistoryInline):
    model = models.ApiKey
    fields = readonly_fields = (
        "prefix",
        "name",
        "rate_limit",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    )
    show_change_link = False


@admin.register(models.App)
class AppAdmin(admin.ModelAdmin):
    form = AppForm
    list_display = ["name", "paused", "active_keys", "subject_count", "created_at"]
    list_filter = ["paused"]
    search_fields = ["name"]
    readonly_fields = ["paused", "created_at", "updated_at"]
    inlines = [ApiKeyInline]
    actions = ["pause_apps", "resume_apps", "rotate_api_key", "rotate_api_key_now"]

    def get_queryset(self, request):
        # correlated counts, not joins: keys × subjects rows would multiply on a big install
        def count(queryset):
            per_app = queryset.filter(app=OuterRef("pk")).order_by().values("app").annotate(n=Count("pk"))
            return Coalesce(Subquery(per_app.values("n")), 0)

        return (
            super()
            .get_queryset(request)
            .annotate(
                _active_keys=count(models.ApiKey.objects.usable()),
                _subjects=count(models.Subject.objects.all()),
            )
        )

    def get_readonly_fields(self, request, obj=None):
        # the name is the app's identity in keys and logs; config stays editable
        return [*self.readonly_fields, "name"] if obj is not None else self.readonly_fields

    @admin.display(description="active keys", ordering="_active_keys")
    def active_keys(self, obj):
        return obj._active_keys

    @admin.display(description="subjects", ordering="_subjects")
    def subject_count(self, obj):
        return obj._subjects

    def save_model(self, request, obj, form, change):
        if not change:
            created = app_create(name=obj.name, config=obj.config, actor=admin_actor(request))
            obj.pk, obj.created_at, obj.updated_at = created.pk, created.created_at, created.updated_at
            obj._state.adding = False
        elif "config" in form.changed_data:
            app_config_set(app=obj, config=obj.config, actor=admin_actor(request))

    def has_delete_permission(self, request, obj=None):
        return False  # deleting an app would delete every subject's memory: pause it instead

    @admin.action(description="Pause selected apps (their API keys get 403)", permissions=["change"])
    def pause_apps(self, request, queryset):
        changed = sum(app_pause(app=app, actor=admin_actor(request)) for app in queryset)
        self.message_user(request, f"Paused {changed} app(s); {queryset.count() - changed} already paused.")

    @admin.action(description="Resume selected apps", permissions=["change"])
    def resume_apps(self, request, queryset):
        changed = sum(app_resume(app=app, actor=admin_actor(request)) for app in queryset)
        self.message_user(request, f"Resumed {changed} app(s); {queryset.count() - changed} were not paused.")

    @admin.action(
        description="Rotate API key (show a new one once; the old ones keep working for the overlap)",
        permissions=["change"],
    )
    def rotate_api_key(self, request, queryset):
        return self._rotate(request, queryset, overlap=None)

    @admin.action(
        description="Rotate API key now (show a new one once; revoke the old ones at once)",
        permissions=["change"],
    )
    def rotate_api_key_now(self, request, queryset):
        return self._rotate(request, queryset, overlap=timedelta(0))

    def _rotate(self, request, queryset, *, overlap):
        rotated = [
            {
                "app": app,
                "rotation": api_key_rotate(
                    app=app, name="rotated in admin", overlap=overlap, actor=admin_actor(request)
                ),
            }
            for app in queryset.order_by("name")
        ]
        # The secrets are rendered into this one response and stored nowhere (not in the
        # messages cookie or the session): closing the page loses them for good.
        response = TemplateResponse(
            request,
            "admin/memory/app/keys_rotated.html",
            {
                **self.admin_site.each_context(request),
                "title": "New API keys",
                "opts": self.model._meta,
                "rotated": rotated,
            },
        )
        response["Cache-Control"] = "no-store"
        return response


@admin.register(models.ApiKey)
class ApiKeyAdmin(HistoryAdmin):
    list_display = [
        "prefix",
        "app",
        "name",
        "rate_limit",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = [
        ("revoked_at", admin.EmptyFieldListFilter),
        ("expires_at", admin.EmptyFieldListFilter),
        "app",
    ]
    search_fields = ["prefix", "name", "app__name"]
    list_select_related = ["app"]
    exclude = ["key_hash"]
    actionable = True
    actions = ["revoke_keys"]

    def get_readonly_fields(self, request, obj=None):
        # the rate limit is the one field edited here, through its service
        return [name for name in super().get_readonly_fields(request, obj) if name != "rate_limit"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)

        def clean_rate_limit(self):
            value = self.cleaned_data.get("rate_limit", "")
            try:
                parse_rate(value or "off")
            except ValueError as exc:
                raise ValidationError(str(exc)) from exc
            return value.strip()

        form.clean_rate_limit = clean_rate_limit
        return form

    def save_model(self, request, obj, form, change):
        current = models.ApiKey.objects.select_related("app").get(pk=obj.pk)
        api_key_rate_limit_set(key=current, rate_limit=obj.rate_limit, actor=admin_actor(request))

    @admin.action(description="Revoke selected API keys", permissions=["change"])
    def revoke_keys(self, request, queryset):
        keys = list(queryset.select_related("app").filter(revoked_at=None))
        for key in keys:
            api_key_revoke(key=key, actor=admin_actor(request))
        self.message_user(request, f"Revoked {len(keys)} key(s).")


# --- subjects -------------------------------------------------------------------------------


def _file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "subject"


@admin.register(models.Subject)
class SubjectAdmin(ServiceDeleteMixin, admin.ModelAdmin):
    list_display = ["external_id", "display_name", "app", "owner", "created_at"]
    list_filter = ["app", ("owner", admin.EmptyFieldListFilter)]
    search_fields = ["external_id", "display_name", "owner__username", "app__name"]
    list_select_related = ["app", "owner"]
    autocomplete_fields = ["owner"]
    fields = ["app", "external_id", "display_name", "owner", "created_at", "memory"]
    readonly_fields = ["app", "external_id", "created_at", "memory"]
    date_hierarchy = "created_at"
    actions = ["reembed", "export_json"]

    def has_add_permission(self, request):
        return False  # subjects come into being through the API, under their app's key

    @admin.display(description="memory")
    def memory(self, obj):
        """What is held about the subject, each count linking to the rows in the admin."""

        rows = [
            (models.ProfileFact, "active facts", {"valid_to__isnull": True}),
            (models.Note, "notes", {}),
            (models.Lesson, "lessons", {}),
            (models.Procedure, "procedures", {}),
            (models.PendingMemory, "pending items", {"status__exact": "pending"}),
            (Conversation, "conversations", {}),
            (models.AuditEvent, "audit events", {}),
        ]
        links = []
        for model, label, lookups in rows:
            count = model._default_manager.filter(subject=obj, **lookups).count()
            url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
            query = urlencode({"subject__id__exact": obj.pk, **lookups})
            links.append((f"{url}?{query}", count, label))
        return format_html_join(" · ", '<a href="{}">{} {}</a>', links)

    def save_model(self, request, obj, form, change):
        current = models.Subject.objects.get(pk=obj.pk)
        subject_update(
            subject=current, display_name=obj.display_name, owner=obj.owner, actor=admin_actor(request)
        )

    delete_related = ("app",)

    def service_delete(self, request, obj):
        subject_delete(subject=obj, actor=admin_actor(request))

    @admin.action(description="Re-embed (recompute the vectors of the notes)", permissions=["change"])
    def reembed(self, request, queryset):

        subjects = [s for s in queryset.select_related("app") if embeddings_enabled(get_config(s.app))]
        if not subjects:
            self.message_user(
                request,
                'Embeddings are off for these subjects\' apps (memory.embeddings.provider is "none"): '
                "nothing to embed.",
                level=messages.WARNING,
            )
            return
        result = reembed(subjects=subjects)
        failed = {error["app"] for error in result["errors"]}
        done = [subject for subject in subjects if subject.app.name not in failed]
        for subject in done:
            audit_record(
                actor=admin_actor(request),
                action="subject.reembedded",
                subject=subject,
                object_kind="subject",
                object_id=subject.pk,
                data={"models": result["models"]},
            )
        for error in result["errors"]:
            self.message_user(
                request, f"{error['app']} ({error['model']}): {error['error']}", level=messages.ERROR
            )
        self.message_user(
            request,
            f"Re-embedded {len(done)} subject(s)"
            f" with {', '.join(result['models']) or 'no model'}: {result['embedded']} vector(s) "
            f"written, {result['unchanged']} unchanged, {result['orphans_removed']} orphan(s) removed.",
            level=messages.WARNING if failed else messages.SUCCESS,
        )

    @admin.action(description="Export as JSON (one subject: .json, several: .zip)", permissions=["view"])
    def export_json(self, request, queryset):

        subjects = list(queryset.select_related("app").order_by("app__name", "external_id"))
        files = []
        for subject in subjects:
            name = f"memoryweb-{_file_part(subject.app.name)}-{_file_part(subject.external_id)}.json"
            files.append((name, json.dumps(subject_export(subject=subject), indent=2, ensure_ascii=False)))
            audit_record(
                actor=admin_actor(request),
                action="subject.exported",
                subject=subject,
                object_kind="subject",
                object_id=subject.pk,
                data={"via": "admin"},
            )
        if len(files) == 1:
            name, body = files[0]
            response = HttpResponse(body, content_type="application/json; charset=utf-8")
        else:
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for file_name, body in files:
                    archive.writestr(file_name, body)
            name = "memoryweb-subjects.zip"
            response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        response["Cache-Control"] = "no-store"
        return response


# --- facts, notes, links, votes -------------------------------------------------------------
