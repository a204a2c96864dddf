from django.urls import path

from memory.api import (
    beliefs,
    consent,
    contract,
    documents,
    evidence,
    lessons,
    modes,
    person,
    portable,
    tools,
    views,
)

urlpatterns = [
    path("context", views.ContextApi.as_view(), name="api-context"),
    path("modes", modes.ModesApi.as_view(), name="api-modes"),
    path("tools", tools.ToolsApi.as_view(), name="api-tools"),
    path("tools/call", tools.ToolCallApi.as_view(), name="api-tools-call"),
    path("modes/<str:name>", modes.ModeApi.as_view(), name="api-mode"),
    path("evidence/<int:evidence_id>", evidence.EvidenceApi.as_view(), name="api-evidence"),
    path(
        "conversations/<int:conversation_id>/state",
        person.ConversationStateApi.as_view(),
        name="api-conversation-state",
    ),
    path("consent/categories", consent.ConsentCategoriesApi.as_view(), name="api-consent-categories"),
    path("subjects/<str:subject>", consent.SubjectApi.as_view(), name="api-subject"),
    path("subjects/<str:subject>/import", portable.SubjectImportApi.as_view(), name="api-subject-import"),
    path("subjects/<str:subject>/consent", consent.ConsentPoliciesApi.as_view(), name="api-consent"),
    path("subjects/<str:subject>/pending", consent.PendingListApi.as_view(), name="api-pending"),
    path(
        "subjects/<str:subject>/pending/<int:pending_id>/approve",
        consent.PendingDecisionApi.as_view(decision="approve"),
        name="api-pending-approve",
    ),
    path(
        "subjects/<str:subject>/pending/<int:pending_id>/reject",
        consent.PendingDecisionApi.as_view(decision="reject"),
        name="api-pending-reject",
    ),
    path("subjects/<str:subject>/profile", views.ProfileApi.as_view(), name="api-profile"),
    path("subjects/<str:subject>/profile/<str:key>", views.ProfileKeyApi.as_view(), name="api-profile-key"),
    path(
        "subjects/<str:subject>/profile/<str:key>/history",
        views.ProfileHistoryApi.as_view(),
        name="api-profile-history",
    ),
    path("subjects/<str:subject>/contract", contract.ContractApi.as_view(), name="api-contract"),
    path(
        "subjects/<str:subject>/contract/<str:mode>",
        contract.ContractModeApi.as_view(),
        name="api-contract-mode",
    ),
    path("subjects/<str:subject>/notes", views.NotesApi.as_view(), name="api-notes"),
    path("subjects/<str:subject>/notes/<int:note_id>", views.NoteApi.as_view(), name="api-note"),
    path("subjects/<str:subject>/votes", views.VotesApi.as_view(), name="api-votes"),
    # beliefs: facts and notes with their evidence, versions and revisions (docs/layers.md)
    path("subjects/<str:subject>/beliefs", beliefs.BeliefsApi.as_view(), name="api-beliefs"),
    path("subjects/<str:subject>/beliefs/<str:belief_id>", beliefs.BeliefApi.as_view(), name="api-belief"),
    path(
        "subjects/<str:subject>/beliefs/<str:belief_id>/revise",
        beliefs.BeliefReviseApi.as_view(),
        name="api-belief-revise",
    ),
    path("subjects/<str:subject>/revisions", beliefs.RevisionsApi.as_view(), name="api-revisions"),
    # memory:// documents; subjects/<subject>/memory/<verb> is also home to the memory
    # operations (chat/urls.py): documents and history are these
    path("subjects/<str:subject>/memory", documents.MemoryReadApi.as_view(), name="api-memory-read"),
    path(
        "subjects/<str:subject>/memory/documents",
        documents.MemoryDocumentsApi.as_view(),
        name="api-memory-documents",
    ),
    path(
        "subjects/<str:subject>/memory/history",
        documents.MemoryHistoryApi.as_view(),
        name="api-memory-history",
    ),
    path("subjects/<str:subject>/lessons", lessons.LessonsApi.as_view(), name="api-lessons"),
    path("subjects/<str:subject>/lessons/<int:lesson_id>", lessons.LessonApi.as_view(), name="api-lesson"),
    path("subjects/<str:subject>/procedures", lessons.ProceduresApi.as_view(), name="api-procedures"),
    path(
        "subjects/<str:subject>/procedures/<int:procedure_id>",
        lessons.ProcedureApi.as_view(),
        name="api-procedure",
    ),
    path(
        "subjects/<str:subject>/consequences",
        person.ConsequencesApi.as_view(),
        name="api-consequences",
    ),
    path(
        "subjects/<str:subject>/consequences/<int:consequence_id>",
        person.ConsequenceApi.as_view(),
        name="api-consequence",
    ),
]
