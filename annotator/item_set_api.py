"""Item sets through the API, for admins: list, draw or name one, read one."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.admin_api import BAD, CONFLICT, NO_CREDENTIALS, NO_PAGE, NOT_ADMIN, NOT_FOUND, AdminApi, _link
from annotator.api_fields import Text
from annotator.models import ItemSet
from annotator.sampling import item_set_draw, item_set_of_ids

BIGINT = 2**63 - 1


POSITIVE_INT = 2**31 - 1  # PositiveIntegerField's bound on every database


class ItemSetIn(serializers.Serializer):
    """Either ``item_ids`` (the set, in that order) or a draw as the item-sets page makes it:
    ``seed`` with ``per_stratum`` (items per reference label) or ``size``."""

    name = Text(max_length=100)
    tier = serializers.ChoiceField(choices=ItemSet.Tier.choices, default=ItemSet.Tier.OTHER)
    item_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=BIGINT), required=False, allow_empty=False
    )
    seed = serializers.IntegerField(min_value=-BIGINT, max_value=BIGINT, required=False)
    per_stratum = serializers.IntegerField(min_value=1, max_value=POSITIVE_INT, required=False)
    size = serializers.IntegerField(min_value=1, max_value=POSITIVE_INT, required=False)
    disjoint_from = serializers.PrimaryKeyRelatedField(
        queryset=ItemSet.objects.all(), required=False, allow_null=True, help_text="held-out set to avoid"
    )
    source = Text(max_length=64, required=False, allow_blank=True, default="")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        draw = {k for k in ("seed", "per_stratum", "size", "disjoint_from") if data.get(k) is not None}
        if data.get("source"):
            draw.add("source")
        if "item_ids" in data:
            if draw:
                raise serializers.ValidationError(
                    {
                        "item_ids": [
                            _("give item_ids or a draw (%(fields)s), not both")
                            % {"fields": ", ".join(sorted(draw))}
                        ]
                    }
                )
            return data
        if data.get("seed") is None:
            raise serializers.ValidationError(
                {"seed": [_("give item_ids, or a seed with per_stratum or size")]}
            )
        if (data.get("per_stratum") is None) == (data.get("size") is None):
            raise serializers.ValidationError({"size": [_("give either per_stratum or size")]})
        return data


class ItemSetOut(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = ItemSet
        fields = [
            "id", "name", "tier", "size", "seed", "stratify_by", "per_stratum", "disjoint_from",
            "source_filter", "created_at", "url",
        ]  # fmt: skip

    def get_url(self, obj: ItemSet) -> str:
        return _link(self.context.get("request"), "api_item_set", obj.pk)


class ItemSetDetailOut(ItemSetOut):
    item_ids = serializers.SerializerMethodField(help_text="the set's items in queue order")
    rounds = serializers.SerializerMethodField()

    class Meta(ItemSetOut.Meta):
        fields = [*ItemSetOut.Meta.fields, "item_ids", "rounds"]

    def get_item_ids(self, obj: ItemSet) -> list[int]:
        return list(obj.members.order_by("position").values_list("item_id", flat=True))

    def get_rounds(self, obj: ItemSet) -> list[int]:
        return list(obj.rounds.order_by("pk").values_list("pk", flat=True))


class ItemSetList(generics.ListAPIView, AdminApi):
    """Item sets, newest first; POST makes one from item ids or by a draw."""

    serializer_class = ItemSetOut
    queryset = ItemSet.objects.order_by("-created_at", "-pk")

    @extend_schema(responses={200: ItemSetOut(many=True), 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NO_PAGE})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=ItemSetIn,
        responses={201: ItemSetDetailOut, 400: BAD, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 409: CONFLICT},
    )
    def post(self, request: Request) -> Response:
        form = ItemSetIn(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        if "item_ids" in data:
            created = item_set_of_ids(
                name=data["name"], item_ids=data["item_ids"], tier=data["tier"], created_by=request.user
            )
        else:
            created = item_set_draw(
                name=data["name"],
                seed=data["seed"],
                tier=data["tier"],
                per_stratum=data.get("per_stratum"),
                size=data.get("size"),
                disjoint_from=data.get("disjoint_from"),
                source=data["source"],
                created_by=request.user,
            )
        out = ItemSetDetailOut(created, context={"request": request}).data
        return Response(out, status=status.HTTP_201_CREATED)


class ItemSetDetail(AdminApi):
    @extend_schema(responses={200: ItemSetDetailOut, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NOT_FOUND})
    def get(self, request: Request, pk: int) -> Response:
        item_set = get_object_or_404(ItemSet, pk=pk)
        return Response(ItemSetDetailOut(item_set, context={"request": request}).data)
