"""The URL tree. Each app brings its own patterns; this module, at the top of the layers, is where
they meet: the REST API under /api/v1/ and the dashboard's pages in the "dashboard" namespace."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

import chat.admin_api
import chat.documents_views
import chat.urls
import chat.views
import consolidation.admin_api
import consolidation.views
import memory.api.admin
import memory.api.urls
import memory.dashboard.urls
from consolidation.api import ConsolidateApi
from memory.dashboard.login import LoginView
from memoryweb.liveness import LiveApi

api_patterns = [
    *memory.api.urls.urlpatterns,
    *chat.urls.urlpatterns,
    path("subjects/<str:subject>/consolidate", ConsolidateApi.as_view(), name="api-consolidate"),
]
# the operators' routes: an admin key (memory.models.AdminKey), never an app's key, so apart
# from api_patterns (docs/admin-api.md)
admin_api_patterns = [
    *memory.api.admin.urlpatterns,
    *chat.admin_api.urlpatterns,
    *consolidation.admin_api.urlpatterns,
]
dashboard_patterns = [
    *memory.dashboard.urls.urlpatterns,
    *chat.views.urlpatterns,
    *chat.documents_views.urlpatterns,
    *consolidation.views.urlpatterns,
]

urlpatterns = [
    path("admin/", admin.site.urls),
    # the one endpoint without a key: not among api_patterns, every one of which needs one
    path("api/v1/live", LiveApi.as_view(), name="api-live"),
    path("api/v1/admin/", include(admin_api_patterns)),
    path("api/v1/", include(api_patterns)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("accounts/login/", LoginView.as_view(), name="login"),  # with the sign-in lockout
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include((dashboard_patterns, "dashboard"))),
]

handler400 = "memory.api.errors.api_bad_request"
handler404 = "memory.api.errors.api_not_found"
handler500 = "memory.api.errors.api_server_error"
