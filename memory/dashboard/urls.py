"""The memory app's dashboard URLs: `/s/<subject_id>/<page>/…`. memoryweb/urls.py mounts them
in the "dashboard" namespace beside chat's playground and consolidation's "consolidate now".

Pages built in their own module (lessons, evidence, graph, consent, contract, preview, jobs, audit,
modes, beliefs, consequences, portable, apps, search) declare a module-level
`urlpatterns` list there, added below.
"""

from django.urls import path

from memory.dashboard.views import (
    apps,
    audit,
    beliefs,
    consent,
    consequences,
    contract,
    evidence,
    graph,
    home,
    jobs,
    lessons,
    modes,
    notes,
    overview,
    portable,
    preview,
    profile,
    search,
)

S = "s/<int:subject_id>/"

urlpatterns = [
    path("", home.home, name="home"),
    path("switch/", home.switch, name="switch"),
    path(S, home.subject_home, name="subject"),
    # overview
    path(S + "overview/", overview.overview, name="overview"),
    path(S + "overview/counts/", overview.overview_counts, name="overview_counts"),
    path(S + "overview/pending/", overview.overview_pending, name="overview_pending"),
    path(S + "overview/consolidation/", overview.overview_consolidation, name="overview_consolidation"),
    # profile
    path(S + "profile/", profile.profile, name="profile"),
    path(S + "profile/add/", profile.fact_add, name="fact_add"),
    path(S + "profile/bulk/", profile.facts_bulk, name="facts_bulk"),
    path(S + "profile/facts/<int:fact_id>/", profile.fact_row, name="fact_row"),
    path(S + "profile/facts/<int:fact_id>/edit/", profile.fact_edit, name="fact_edit"),
    path(S + "profile/facts/<int:fact_id>/park/", profile.fact_park, name="fact_park"),
    path(S + "profile/facts/<int:fact_id>/remove/", profile.fact_remove, name="fact_remove"),
    path(S + "profile/facts/<int:fact_id>/history/", profile.fact_history, name="fact_history"),
    # notes
    path(S + "notes/", notes.notes, name="notes"),
    path(S + "notes/add/", notes.note_add, name="note_add"),
    path(S + "notes/bulk/", notes.notes_bulk, name="notes_bulk"),
    path(S + "notes/<int:note_id>/", notes.note_detail, name="note_detail"),
    path(S + "notes/<int:note_id>/vote/", notes.note_vote, name="note_vote"),
    path(S + "notes/<int:note_id>/edit/", notes.note_edit, name="note_edit"),
    path(S + "notes/<int:note_id>/forget/", notes.note_forget, name="note_forget"),
]

# Pages that bring their own `urlpatterns` (see the module docstring).
for _module in (
    apps,
    lessons,
    evidence,
    graph,
    consent,
    contract,
    preview,
    jobs,
    audit,
    modes,
    beliefs,
    consequences,
    portable,
    search,
):
    urlpatterns += _module.urlpatterns
