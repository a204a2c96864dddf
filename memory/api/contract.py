"""The interaction contract over REST (docs/contract.md): read what was learned per mode,
correct a dimension (the person's setting wins over observation), reset."""

from django.db import transaction
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from memory.api.base import AppAPIView, StrictQuerySerializer, StrictSerializer
from memory.api.fields import ModeNameField, StrictCharField, StrictChoiceField
from memory.models import InteractionContract
from memory.modes import mode_get
from memory.person.contract import DIMENSIONS, SOURCES, is_shown, render, signal_count, style_count
from memory.services.contract import MAX_REASON_CHARS, contract_reset, contract_set
from memoryweb.errors import InvalidInput, NotFound


def _dimension_out(name: str) -> serializers.Serializer:
    return inline_serializer(
        f"Contract{name.capitalize()}Out",
        {
            "value": serializers.ChoiceField(choices=list(DIMENSIONS[name])),
            "score": serializers.FloatField(help_text="-1 … 1 on the scale " + " → ".join(DIMENSIONS[name])),
            "confidence": serializers.FloatField(help_text="0 … 1; 1 for the person's setting"),
            "evidence": serializers.ListField(
                child=serializers.IntegerField(),
                help_text="ids of the messages it was learned from, newest last",
            ),
            "signals": serializers.IntegerField(
                help_text="explicit requests, corrections and reactions counted"
            ),
            "style_messages": serializers.IntegerField(help_text="messages whose style it read"),
            "source": serializers.ChoiceField(choices=list(SOURCES)),
            "reason": serializers.CharField(),
            "updated_at": serializers.CharField(allow_null=True, help_text="ISO 8601"),
            "shown": serializers.BooleanField(help_text="renders in ### contract (contract.minConfidence)"),
        },
        required=False,
    )


class ContractDimensionsOut(serializers.Serializer):
    depth = _dimension_out("depth")
    directness = _dimension_out("directness")
    pushback = _dimension_out("pushback")
    pace = _dimension_out("pace")


class ContractOut(serializers.Serializer):
    mode = serializers.CharField()
    renders = serializers.BooleanField(
        help_text="the mode's context carries ### contract (and contract.enabled)"
    )
    observations = serializers.IntegerField(help_text="messages it learned from")
    dimensions = ContractDimensionsOut(help_text="what is known; a dimension not learned yet is absent")
    text = serializers.CharField(help_text='the ### contract this mode\'s context gets now; "" when none')
    created_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class ContractListOut(serializers.Serializer):
    contracts = ContractOut(many=True)


def contract_out(*, mode: str, contract: InteractionContract | None, config) -> dict:
    dimensions = (contract.dimensions if contract else {}) or {}
    try:
        renders = bool(config["contract.enabled"] and mode_get(mode).renders.get("contract", False))
    except InvalidInput:
        renders = False  # a row of a mode whose custom manifest is gone
    minimum = config["contract.minConfidence"]
    out = {}
    for name in DIMENSIONS:
        state = dimensions.get(name)
        if not isinstance(state, dict) or state.get("value") not in DIMENSIONS[name]:
            continue
        out[name] = {
            "value": state["value"],
            "score": float(state.get("score", 0.0)),
            "confidence": float(state.get("confidence", 0.0)),
            "evidence": [int(i) for i in state.get("evidence") or []],
            "signals": signal_count(state),
            "style_messages": style_count(state),
            "source": state.get("source", "observed"),
            "reason": state.get("reason", ""),
            "updated_at": state.get("updated_at"),
            "shown": is_shown(name, state, min_confidence=minimum),
        }
    text = render(dimensions, min_confidence=minimum, cap=config["contract.maxTokens"])[0] if renders else ""
    body = {
        "mode": mode,
        "renders": renders,
        "observations": contract.observations if contract else 0,
        "dimensions": out,
        "text": text,
        "created_at": contract.created_at if contract else None,
        "updated_at": contract.updated_at if contract else None,
    }
    return dict(ContractOut(body).data)


def _dimension_fields() -> dict:
    return {
        name: StrictChoiceField(
            choices=list(values), required=False, help_text=f"the person's setting: {', '.join(values)}"
        )
        for name, values in DIMENSIONS.items()
    }


ANY_DIMENSION = {"anyOf": [{"required": [name]} for name in DIMENSIONS]}


class _ContractBase(AppAPIView):
    def _respond(self, subject, mode: str):
        contract = InteractionContract.objects.filter(subject=subject, mode=mode).first()
        return Response(contract_out(mode=mode, contract=contract, config=self.config))

    def _set(self, subject, mode: str, data: dict):
        values = {name: data[name] for name in DIMENSIONS if name in data}
        if not values:
            raise InvalidInput(f"give at least one of {', '.join(DIMENSIONS)}", field="depth")
        contract = contract_set(
            subject=subject,
            mode=mode,
            values=values,
            reason=data.get("reason", ""),
            actor=self.actor,
            config=self.config,
        )
        return Response(contract_out(mode=contract.mode, contract=contract, config=self.config))


class ContractApi(_ContractBase):
    class EditSerializer(StrictSerializer):
        min_fields = 2
        schema_rules = ANY_DIMENSION

        mode = ModeNameField(required=True, default=serializers.empty)
        reason = StrictCharField(required=False, max_length=MAX_REASON_CHARS)

        def get_fields(self):
            return {**super().get_fields(), **_dimension_fields()}

    @extend_schema(
        responses={200: ContractListOut},
        operation_id="contract_list",
        summary="The interaction contract learned in each mode",
    )
    def get(self, request, subject):
        subj = self.subject(subject)
        rows = InteractionContract.objects.filter(subject=subj).order_by("mode")
        return Response(
            {"contracts": [contract_out(mode=row.mode, contract=row, config=self.config) for row in rows]}
        )

    @extend_schema(
        request=EditSerializer,
        responses={200: ContractOut},
        operation_id="contract_set",
        summary="Correct dimensions of one mode's contract (the person's setting wins over observation)",
    )
    @transaction.atomic  # a refused body leaves no new subject behind
    def patch(self, request, subject):
        data = self.validated(self.EditSerializer, request.data)
        mode = mode_get(data["mode"], field="mode").name
        return self._set(self.subject(subject, create=True), mode, data)

    @extend_schema(
        responses={204: None}, operation_id="contract_reset_all", summary="Forget the contract of every mode"
    )
    def delete(self, request, subject):
        contract_reset(subject=self.subject(subject), actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ContractModeApi(_ContractBase):
    class EditSerializer(StrictSerializer):
        min_fields = 1
        schema_rules = ANY_DIMENSION

        reason = StrictCharField(required=False, max_length=MAX_REASON_CHARS)

        def get_fields(self):
            return {**super().get_fields(), **_dimension_fields()}

    class ResetQuery(StrictQuerySerializer):
        dimension = StrictChoiceField(
            choices=list(DIMENSIONS), required=False, help_text="reset only this dimension"
        )

    @staticmethod
    def _mode(mode: str) -> str:
        try:
            return mode_get(mode).name
        except InvalidInput:
            raise NotFound(
                f"no mode {mode!r}; GET /api/v1/modes lists the known ones", field="mode"
            ) from None

    @extend_schema(
        responses={200: ContractOut},
        operation_id="contract_read",
        summary="The interaction contract of one mode",
    )
    def get(self, request, subject, mode):
        subj = self.subject(subject)
        return self._respond(subj, self._mode(mode))

    @extend_schema(
        request=EditSerializer,
        responses={200: ContractOut},
        operation_id="contract_mode_set",
        summary="Correct dimensions of this mode's contract",
    )
    @transaction.atomic
    def patch(self, request, subject, mode):
        subj = self.subject(subject)
        mode = self._mode(mode)
        data = self.validated(self.EditSerializer, request.data)
        return self._set(subj, mode, data)

    @extend_schema(
        parameters=[ResetQuery],
        responses={204: None},
        operation_id="contract_reset",
        summary="Forget this mode's contract, or one dimension of it",
    )
    def delete(self, request, subject, mode):
        subj = self.subject(subject)
        mode = self._mode(mode)
        params = self.validated(self.ResetQuery, request.query_params)
        contract_reset(subject=subj, actor=self.actor, mode=mode, dimension=params.get("dimension"))
        return Response(status=status.HTTP_204_NO_CONTENT)
