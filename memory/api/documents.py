"""memory:// over REST, read-only: one document by its address, the subject's documents, and a
document's version history with diffs. Another app's subject, a malformed address, a document
never written or a pruned one all answer the same 404."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictQuerySerializer
from memory.api.fields import StrictCharField, StrictChoiceField
from memory.documents import document_resolve, document_versions, documents_current, version_diff
from memory.models import DocumentKind
from memory.tokens import estimate_tokens


class DocumentOut(serializers.Serializer):
    url = serializers.CharField(help_text="its memory:// address")
    kind = serializers.ChoiceField(choices=DocumentKind.choices)
    scope = serializers.CharField(allow_blank=True, help_text='the project; "" = the whole subject')
    path = serializers.CharField()
    name = serializers.CharField(allow_blank=True, help_text="a skill's or mental model's name")
    description = serializers.CharField(allow_blank=True)
    auto_refresh = serializers.BooleanField()
    version = serializers.IntegerField(source="current.number", help_text="the current version's number")
    method = serializers.CharField(
        source="current.method", allow_blank=True, help_text='"heuristic" or the model that wrote it'
    )
    tokens = serializers.SerializerMethodField(help_text="the content's size in tokens (estimated)")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_tokens(self, document) -> int:
        return estimate_tokens(document.current.content)


class DocumentDetailOut(DocumentOut):
    content = serializers.CharField(source="current.content", allow_blank=True, help_text="Markdown")


class DocumentListOut(serializers.Serializer):
    documents = DocumentOut(many=True)


class DocumentVersionOut(serializers.Serializer):
    number = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    method = serializers.CharField(allow_blank=True)
    digest = serializers.CharField(help_text="SHA-256 of the content")
    tokens = serializers.IntegerField(help_text="the content's size in tokens (estimated)")
    diff = serializers.CharField(allow_blank=True, help_text="unified diff from the previous version")


class DocumentHistoryOut(serializers.Serializer):
    url = serializers.CharField()
    versions = DocumentVersionOut(many=True)


class AddressQuery(StrictQuerySerializer):
    url = StrictCharField(max_length=1000, help_text="e.g. memory://root/MEMORY.md")


class MemoryReadApi(AppAPIView):
    QuerySerializer = AddressQuery

    @extend_schema(
        parameters=[AddressQuery],
        responses={200: DocumentDetailOut},
        summary="Read a memory:// document (its current version)",
    )
    def get(self, request, subject):
        params = self.validated(self.QuerySerializer, request.query_params)
        document = document_resolve(subject=self.subject(subject), url=params["url"])
        return Response(DocumentDetailOut(document).data)


class MemoryDocumentsApi(AppAPIView):
    class QuerySerializer(StrictQuerySerializer):
        kind = StrictChoiceField(choices=DocumentKind.choices, required=False)
        scope = StrictCharField(required=False, allow_blank=True, max_length=200)

    @extend_schema(
        parameters=[QuerySerializer],
        responses={200: DocumentListOut},
        summary="List the subject's memory:// documents",
    )
    def get(self, request, subject):
        params = self.validated(self.QuerySerializer, request.query_params)
        documents = documents_current(
            subject=self.subject(subject), scope=params.get("scope"), kind=params.get("kind")
        )
        return Response({"documents": DocumentOut(documents, many=True).data})


class MemoryHistoryApi(AppAPIView):
    QuerySerializer = AddressQuery

    @extend_schema(
        parameters=[AddressQuery],
        responses={200: DocumentHistoryOut},
        summary="Every version of a memory:// document, each with its diff",
    )
    def get(self, request, subject):
        params = self.validated(self.QuerySerializer, request.query_params)
        document = document_resolve(subject=self.subject(subject), url=params["url"])
        versions, previous = [], None
        for version in document_versions(document=document):
            versions.append(
                {
                    "number": version.number,
                    "created_at": version.created_at,
                    "method": version.method,
                    "digest": version.digest,
                    "tokens": estimate_tokens(version.content),
                    "diff": version_diff(previous, version, url=document.url),
                }
            )
            previous = version
        return Response(
            DocumentHistoryOut({"url": document.url, "versions": versions}).data,
        )
