"""REST API for admins: import a file (and make it annotatable in the same request) and item sets;
rounds, their progress and pool are in annotator.round_api, which uses what this module defines
(roles, refusals, the round's fields). The same services as the admin pages (imports, sampling,
round_create and the pool changes); nothing here writes on its own.

Answers: 400 names the field at fault (an import problem names its line and column), 409 a
conflict with what exists (a taken name, a blind round over items its annotators saw
prefilled, a pool change that does not apply), 401 without credentials, 403 for non-admins.
Every refused request writes nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.import_staging import MAX_UPLOAD
from annotator.imports import (
    FORMATS,
    ImportFileError,
    default_source,
    detect_format,
    items_import,
    source_items,
)
from annotator.models import ItemSet, Round
from annotator.roles import ADMIN, HasRole
from annotator.round_selectors import (
    annotator_choices,
    parser_coverage,
    round_annotators,
)
from annotator.sampling import DrawError, item_set_draw, item_set_of_ids
from annotator.selectors import Progress
from annotator.services import (
    round_create,
)

BIGINT = 2**63 - 1
POSITIVE_INT = 2**31 - 1  # PositiveIntegerField's bound on every database
SMALL_INT = 2**15 - 1


IsAdmin = HasRole(ADMIN, message="importing, item sets and rounds are for admins")


class AdminApi(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]


class Refused(Exception):
    """A request refused with ``status`` and ``body``, raised inside the transaction so that
    everything it wrote is rolled back."""

    def __init__(self, status_code: int, body: dict[str, Any]):
        self.status_code = status_code
        self.body = body
        super().__init__(str(body))

    @property
    def api_status(self) -> int:
        return self.status_code

    def api_body(self) -> dict[str, Any]:
        return self.body


def _refuse(error: Refused) -> Response:
    return Response(error.body, status=error.status_code)


BAD = OpenApiResponse(description="bad input: each field at fault with its messages")
NO_CREDENTIALS = OpenApiResponse(description="no or wrong credentials")
NOT_ADMIN = OpenApiResponse(description="not an admin")
NOT_FOUND = OpenApiResponse(description="no such object")
NO_PAGE = OpenApiResponse(description="no such page")
CONFLICT = OpenApiResponse(description="conflicts with what exists: a taken name, prefill overlap")

# The round's choices as plain value lists: the prefill job's "mode" and "text_field" have other
# values, so the schema names these apart (the mode's enum is RoundModeEnum through
# SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"], which matches this list).
MODES = [value for value, _ in Round.Mode.choices]
TEXT_FIELDS = [value for value, _ in Round.TEXT_FIELDS]


@extend_schema_field({"type": "string", "enum": MODES})
class ModeField(serializers.ChoiceField):
    pass


@extend_schema_field({"type": "string", "enum": TEXT_FIELDS})
class TextFieldField(serializers.ChoiceField):
    pass


# --- input ---------------------------------------------------------------------------------


class AnnotatorsField(serializers.ListField):
    """Usernames or ids of active annotators, repeated or comma-separated (usernames hold no
    comma). Resolved to users in the order given."""

    child = serializers.CharField(max_length=150)

    def to_internal_value(self, data: Any) -> list[User]:
        if isinstance(data, str):
            data = [data]
        given = super().to_internal_value(data)
        values = [part.strip() for value in given for part in value.split(",") if part.strip()]
        if not values:
            return []
        ids = [int(v) for v in values if v.isascii() and v.isdigit() and len(v) < 19]
        candidates = annotator_choices().filter(username__in=values) | annotator_choices().filter(pk__in=ids)
        by_key: dict[str, User] = {}
        for user in candidates:
            by_key[user.username] = user
            by_key.setdefault(str(user.pk), user)
        unknown = [v for v in values if v not in by_key]
        if unknown:
            raise serializers.ValidationError(
                f"no active annotator named (or with the id) {', '.join(map(repr, unknown[:10]))}"
            )
        return [by_key[v] for v in values]


class RoundOptionsIn(serializers.Serializer):
    """A round's pool and options, as round_create takes them (the new-round page's fields)."""

    annotators = AnnotatorsField(
        required=False, default=list, help_text="usernames or ids of active annotators"
    )
    mode = ModeField(choices=MODES, default=Round.Mode.BLIND)
    text_field = TextFieldField(choices=TEXT_FIELDS, default=Round.TEXT_MASKED)
    annotators_per_item = serializers.IntegerField(min_value=1, max_value=SMALL_INT, default=2)
    pass_kind = serializers.ChoiceField(choices=Round.PassKind.choices, default=Round.PassKind.HUMAN)
    show_routed_label = serializers.BooleanField(default=False)
    prefill_parser = serializers.CharField(
        max_length=300, required=False, allow_blank=True, default="", help_text="prefilled rounds"
    )
    allow_prefill_overlap = serializers.BooleanField(
        default=False, help_text="create a blind round even over items its annotators saw prefilled"
    )


class ImportIn(RoundOptionsIn):
    file = serializers.FileField(help_text="crowd-enVent TSV, JSONL or CSV (UTF-8)")
    format = serializers.ChoiceField(
        choices=FORMATS, required=False, allow_blank=True, help_text="empty: from the file name"
    )
    source = serializers.CharField(
        max_length=64, required=False, allow_blank=True,
        help_text="empty: crowd-enVent for a crowd-enVent TSV, the file's name for JSONL or CSV",
    )  # fmt: skip
    item_set = serializers.CharField(
        max_length=100, required=False, allow_blank=True,
        help_text="make an item set of every row of the file, in file order, with this name",
    )  # fmt: skip
    tier = serializers.ChoiceField(choices=ItemSet.Tier.choices, default=ItemSet.Tier.OTHER)
    round = serializers.CharField(
        max_length=100, required=False, allow_blank=True,
        help_text="create a round of this name over the item set (named after the round if not given)",
    )  # fmt: skip

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("annotators") and not data.get("round"):
            raise serializers.ValidationError({"annotators": ["annotators need a round (name it in round)"]})
        return data


class RoundIn(RoundOptionsIn):
    name = serializers.CharField(max_length=100)
    item_set = serializers.PrimaryKeyRelatedField(queryset=ItemSet.objects.all(), help_text="item set id")


class ItemSetIn(serializers.Serializer):
    """Either ``item_ids`` (the set, in that order) or a draw as the item-sets page makes it:
    ``seed`` with ``per_stratum`` (items per reference label) or ``size``."""

    name = serializers.CharField(max_length=100)
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
    source = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        draw = {k for k in ("seed", "per_stratum", "size", "disjoint_from") if data.get(k) is not None}
        if data.get("source"):
            draw.add("source")
        if "item_ids" in data:
            if draw:
                raise serializers.ValidationError(
                    {"item_ids": [f"give item_ids or a draw ({', '.join(sorted(draw))}), not both"]}
                )
            return data
        if data.get("seed") is None:
            raise serializers.ValidationError({"seed": ["give item_ids, or a seed with per_stratum or size"]})
        if (data.get("per_stratum") is None) == (data.get("size") is None):
            raise serializers.ValidationError({"size": ["give either per_stratum or size"]})
        return data


# --- output --------------------------------------------------------------------------------


class ProgressOut(serializers.Serializer):
    assigned = serializers.IntegerField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField()
    pending = serializers.IntegerField()
    percent = serializers.IntegerField(help_text="share settled (done or skipped)")


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


class RoundOut(serializers.ModelSerializer):
    item_set = serializers.IntegerField(source="item_set_id")
    mode = ModeField(choices=MODES, read_only=True)
    text_field = TextFieldField(choices=TEXT_FIELDS, read_only=True)
    item_set_name = serializers.CharField(source="item_set.name")
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField(help_text="the round's admin page")

    class Meta:
        model = Round
        fields = [
            "id", "name", "item_set", "item_set_name", "mode", "text_field", "annotators_per_item",
            "pass_kind", "show_routed_label", "prefill_parser", "created_at", "url", "page",
        ]  # fmt: skip

    def get_url(self, obj: Round) -> str:
        return _link(self.context.get("request"), "api_round", obj.pk)

    def get_page(self, obj: Round) -> str:
        return _link(self.context.get("request"), "manage_round", obj.pk, kwarg="round_id")


class RoundListOut(RoundOut):
    progress = ProgressOut()
    pool_size = serializers.IntegerField()

    class Meta(RoundOut.Meta):
        fields = [*RoundOut.Meta.fields, "pool_size", "progress"]


class AnnotatorProgressOut(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    in_pool = serializers.BooleanField()
    progress = ProgressOut()


class RoundDetailOut(RoundOut):
    progress = ProgressOut(help_text="the whole round")
    annotators = AnnotatorProgressOut(many=True, help_text="each annotator with work in it or in its pool")

    class Meta(RoundOut.Meta):
        fields = [*RoundOut.Meta.fields, "progress", "annotators"]


class PoolChangeOut(serializers.Serializer):
    moved = serializers.IntegerField(help_text="pending assignments that changed hands")
    uncovered = serializers.IntegerField(help_text="items left with fewer annotators")
    received = serializers.DictField(
        child=serializers.IntegerField(), help_text="who received pending assignments, how many each"
    )
    given = serializers.DictField(
        child=serializers.IntegerField(), help_text="whose pending assignments moved, how many each"
    )
    summary = serializers.CharField()
    round = RoundDetailOut()


class ImportOut(serializers.Serializer):
    source = serializers.CharField()
    rows = serializers.IntegerField()
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    item_set = ItemSetOut(allow_null=True)
    round = RoundOut(allow_null=True)
    assignments = serializers.IntegerField(help_text="assignments the round was created with (0: no round)")


def _link(request: Request | None, name: str, pk: int, *, kwarg: str = "pk") -> str:
    path = reverse(name, kwargs={kwarg: pk})
    return request.build_absolute_uri(path) if request is not None else path


def _progress(p: Progress) -> dict[str, int]:
    return {"assigned": p.assigned, "done": p.done, "skipped": p.skipped, "pending": p.pending,
            "percent": p.percent}  # fmt: skip


def _round_detail(round_: Round) -> Round:
    """The round with its progress: per annotator, and overall as their sum (one query each)."""
    rows = round_annotators(round_)
    round_.annotators = [
        {
            "id": r.user.pk,
            "username": r.user.username,
            "in_pool": r.in_pool,
            "progress": _progress(r.progress),
        }
        for r in rows
    ]
    total = Progress(*(sum(getattr(r.progress, k) for r in rows) for k in ("assigned", "done", "skipped")))
    round_.progress = _progress(total)
    return round_


# --- errors from the services ----------------------------------------------------------------


def _conflict(field: str, message: str, **more: Any) -> Refused:
    """A 409: ``detail`` as every DRF error has it, and the field the conflict is about."""
    return Refused(status.HTTP_409_CONFLICT, {"detail": message, field: [message], **more})


def _draw_refused(error: DrawError, *, name_field: str = "name") -> Refused:
    if "already exists" in str(error):
        return _conflict(name_field, str(error))
    body = {"detail": str(error)}
    if error.field:
        body[error.field] = [str(error)]  # as every other 400 names its field
    return Refused(status.HTTP_400_BAD_REQUEST, body)


def _create_round(data: dict[str, Any], *, name: str, item_set: ItemSet) -> Round:
    parser = data["prefill_parser"]
    if data["mode"] == Round.Mode.PREFILLED and parser:
        # as the new-round page offers them: parsers with legal predictions for the set's items
        offered = [c.parser for c in parser_coverage(item_set)]
        if parser not in offered:  # (one read from another text field: round_create names it)
            shown = ", ".join(offered) or "none"
            raise Refused(
                400,
                {
                    "prefill_parser": [
                        f"{parser!r} has no legal prediction for this item set; parsers: {shown}"
                    ]
                },
            )
    return round_create(
        name=name,
        item_set=item_set,
        annotators=data["annotators"],
        mode=data["mode"],
        text_field=data["text_field"],
        annotators_per_item=data["annotators_per_item"],
        pass_kind=data["pass_kind"],
        show_routed_label=data["show_routed_label"],
        prefill_parser=data["prefill_parser"],
        allow_prefill_overlap=data["allow_prefill_overlap"],
    )


# --- import ----------------------------------------------------------------------------------


class ImportCreate(AdminApi):
    """One request from a file to annotatable work: import its rows, optionally make an item set
    of them and a round over it with its assignments, all in one transaction."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": ImportIn},
        responses={
            201: ImportOut, 400: BAD, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 409: CONFLICT,
            415: OpenApiResponse(description="not multipart/form-data"),
        },
    )  # fmt: skip
    def post(self, request: Request) -> Response:
        form = ImportIn(data=request.data)
        form.is_valid(raise_exception=True)
        body = _import(form.validated_data, request)
        return Response(ImportOut(body, context={"request": request}).data, status=status.HTTP_201_CREATED)


def _import(data: dict[str, Any], request: Request) -> dict[str, Any]:
    upload = data["file"]
    if upload.size > MAX_UPLOAD:
        raise Refused(400, {"file": [f"the file is larger than {MAX_UPLOAD // 1024 // 1024} MB"]})
    try:
        fmt = data.get("format") or detect_format(upload.name or "")
    except ImportFileError as error:
        raise Refused(400, {"format": [str(p) for p in error.problems]}) from None
    source = (data.get("source") or "").strip() or default_source(fmt=fmt, filename=upload.name or "")
    round_name = (data.get("round") or "").strip()
    set_name = (data.get("item_set") or "").strip() or round_name
    # names first: a taken one refuses the request before the file is read
    if set_name and ItemSet.objects.filter(name=set_name).exists():
        raise _conflict("item_set", f"an item set named {set_name!r} already exists")
    if round_name and Round.objects.filter(name=round_name).exists():
        raise _conflict("round", f"a round named {round_name!r} already exists")
    with transaction.atomic():
        try:
            report = items_import(data=upload.read(), fmt=fmt, source=source)
        except ImportFileError as error:
            raise Refused(
                400,
                {
                    "file": [str(p) for p in error.problems],
                    "problems": [
                        {"line": p.line, "column": p.column, "message": p.message} for p in error.problems
                    ],
                },
            ) from None
        item_set = round_ = None
        if set_name:
            ids = dict(source_items(source, report.source_ids, "pk"))
            try:
                item_set = item_set_of_ids(
                    name=set_name,
                    item_ids=[ids[s] for s in report.source_ids],
                    tier=data["tier"],
                    created_by=request.user,
                    ids_checked=True,
                )
            except DrawError as error:
                raise _draw_refused(error, name_field="item_set") from None
        if round_name:
            try:
                round_ = _create_round(data, name=round_name, item_set=item_set)
            except Refused as error:
                if "name" in error.body:  # the request names the round in "round"
                    error.body["round"] = error.body.pop("name")
                raise
    return {
        "source": report.source, "rows": report.rows, "created": report.created,
        "unchanged": report.unchanged, "item_set": item_set, "round": round_,
        "assignments": round_.assignments.count() if round_ else 0,
    }  # fmt: skip


# --- item sets -------------------------------------------------------------------------------


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
