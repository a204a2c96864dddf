"""The Django admin for the memory app (DESIGN §6): every model, with search and filters.

History (versions, votes, retrievals, the audit trail, superseded facts) is read-only here.
What the admin may change goes through the services, as the staff user, so it is audited
like any other write: apps (create, config, pause, resume, rotate the API key), subjects
(display name, owner, delete, consolidate, re-embed, export), API keys (revoke), notes,
lessons and procedures (forget or delete).
"""

from django.contrib import admin

from memory.admin import conversations, events, memories, person, tenants  # noqa: F401  (each registers its models)
from memory.dashboard.login import LockoutAdminAuthenticationForm

admin.site.site_header = "memoryweb admin"
admin.site.site_title = "memoryweb admin"
admin.site.login_form = LockoutAdminAuthenticationForm  # the dashboard's sign-in lockout
