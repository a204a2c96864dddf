"""Lessons and procedures (distilled by consolidation): recall, read, edit, park, delete; consolidate now."""

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictQuerySerializer, StrictSerializer
from memory.api.fields import StrictBooleanField, StrictCharField, StrictIntegerField, StrictListField
from memory.api.views import PARKED_IN, PARKED_OUT
from memory.models import Lesson, Procedure
from memory.search.lexical import lesson_search, procedure_search
from memory.selectors import distilled_recall
from memory.services.lessons import lesson_delete, lesson_edit, procedure_delete, procedure_edit
from memory.services.notes import recalls_count
from memory.services.parking import item_park
from memoryweb.errors import InvalidInput, NotFound


class LessonOut(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    vote_score = serializers.FloatField()
    recall_count = serializers.IntegerField()
    version = serializers.IntegerField()
    origin = serializers.CharField()
    parked_at = serializers.DateTimeField(allow_null=True, help_text=PARKED_OUT)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    notes = serializers.SerializerMethodField(help_text="The archived notes it was distilled from.")

    def get_notes(self, obj) -> list[int]:
        return list(obj.consolidated_notes.order_by("id").values_list("id", flat=True))


class ProcedureOut(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    steps = serializers.ListField(child=serializers.CharField(), help_text="Advice text; never executed.")
    tags = serializers.ListField(child=serializers.CharField())
    lesson = serializers.IntegerField(source="lesson_id", allow_null=True)
    vote_score = serializers.FloatField()
    recall_count = serializers.IntegerField()
    version = serializers.IntegerField()
    origin = serializers.CharField()
    parked_at = serializers.DateTimeField(allow_null=True, help_text=PARKED_OUT)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class LessonRecalledOut(LessonOut):
    score = serializers.FloatField()


class LessonListOut(serializers.Serializer):
    lessons = LessonRecalledOut(many=True)


class ProcedureRecalledOut(ProcedureOut):
    score = serializers.FloatField()


class ProcedureListOut(serializers.Serializer):
    procedures = ProcedureRecalledOut(many=True)


def _owned(model, subject, pk):
    """The subject's lesson or procedure `pk`, else NotFound (another subject's looks missing)."""
    item = model.objects.filter(pk=pk, subject=subject).first()
    if item is None:
        raise NotFound(f"no {model._meta.model_name} {pk} for this subject", field="id")
    return item


class RecallQuery(StrictQuerySerializer):
    query = StrictCharField(required=False, allow_blank=True, max_length=20_000, default="")
    k = StrictIntegerField(required=False, min_value=1, max_value=100, default=10)


class _DistilledListApi(AppAPIView):
    model: type = Lesson
    out: type = LessonOut
    search = staticmethod(lesson_search)
    key = "lessons"

    def get(self, request, subject):
        params = self.validated(RecallQuery, request.query_params)
        results = distilled_recall(
            model=self.model,
            search=self.search,
            subject=self.subject(subject),
            query=params["query"],
            k=params["k"],
        )
        recalls_count(model=self.model, ids=[item.pk for item, _ in results])
        payload = []
        for item, score in results:
            data = self.out(item).data
            data["score"] = round(score, 4)
            payload.append(data)
        return Response({self.key: payload})


class LessonsApi(_DistilledListApi):
    @extend_schema(
        parameters=[RecallQuery],
        responses={200: LessonListOut},
        summary="Recall lessons",
        operation_id="lessons_recall",
    )
    def get(self, request, subject):
        return super().get(request, subject)


class ProceduresApi(_DistilledListApi):
    model = Procedure
    out = ProcedureOut
    search = staticmethod(procedure_search)
    key = "procedures"

    @extend_schema(
        parameters=[RecallQuery],
        responses={200: ProcedureListOut},
        summary="Recall procedures",
        operation_id="procedures_recall",
    )
    def get(self, request, subject):
        return super().get(request, subject)


class LessonApi(AppAPIView):
    class EditSerializer(StrictSerializer):
        min_fields = 1

        text = StrictCharField(max_length=1000, required=False)
        parked = StrictBooleanField(required=False, help_text=PARKED_IN)

    def lesson(self, subject, lesson_id) -> Lesson:
        return _owned(Lesson, self.subject(subject), lesson_id)

    @extend_schema(responses={200: LessonOut}, summary="Read a lesson")
    def get(self, request, subject, lesson_id):
        return Response(LessonOut(self.lesson(subject, lesson_id)).data)

    @extend_schema(
        request=EditSerializer,
        responses={200: LessonOut},
        summary="Edit a lesson (a new version), or park or unpark it",
    )
    @transaction.atomic  # an edit and a park in one request: both or neither
    def patch(self, request, subject, lesson_id):
        data = self.validated(self.EditSerializer, request.data)
        if not data:
            raise InvalidInput("give text or parked to change", field="text")
        lesson = self.lesson(subject, lesson_id)
        if "text" in data:
            lesson = lesson_edit(lesson=lesson, text=data["text"], actor=self.actor)
        if "parked" in data:
            item_park(item=lesson, parked=data["parked"], actor=self.actor)
        return Response(LessonOut(lesson).data)

    @extend_schema(responses={204: None}, summary="Delete a lesson (its notes stay archived)")
    def delete(self, request, subject, lesson_id):
        lesson_delete(lesson=self.lesson(subject, lesson_id), actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProcedureApi(AppAPIView):
    class EditSerializer(StrictSerializer):
        min_fields = 1

        title = StrictCharField(max_length=200, required=False)
        steps = StrictListField(
            child=StrictCharField(max_length=500), required=False, min_length=2, max_length=8
        )
        parked = StrictBooleanField(required=False, help_text=PARKED_IN)

    def procedure(self, subject, procedure_id) -> Procedure:
        return _owned(Procedure, self.subject(subject), procedure_id)

    @extend_schema(responses={200: ProcedureOut}, summary="Read a procedure")
    def get(self, request, subject, procedure_id):
        return Response(ProcedureOut(self.procedure(subject, procedure_id)).data)

    @extend_schema(
        request=EditSerializer,
        responses={200: ProcedureOut},
        summary="Edit a procedure (a new version), or park or unpark it",
    )
    @transaction.atomic  # an edit and a park in one request: both or neither
    def patch(self, request, subject, procedure_id):
        data = self.validated(self.EditSerializer, request.data)
        if not data:
            raise InvalidInput("give title, steps or parked to change", field="steps")
        parked = data.pop("parked", None)
        procedure = self.procedure(subject, procedure_id)
        if data:
            procedure = procedure_edit(procedure=procedure, actor=self.actor, **data)
        if parked is not None:
            item_park(item=procedure, parked=parked, actor=self.actor)
        return Response(ProcedureOut(procedure).data)

    @extend_schema(responses={204: None}, summary="Delete a procedure")
    def delete(self, request, subject, procedure_id):
        procedure_delete(procedure=self.procedure(subject, procedure_id), actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)
