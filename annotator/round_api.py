"""Rounds through the API, for admins: list and create, a round's progress per annotator and
overall, and its pool (add an annotator, who receives a fair share of the pending work; remove
one, whose pending work goes to the others). The same services as the round pages; what the admin
API's resources share (the role, refusals) is in annotator.admin_api."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.admin_api import (
    BAD,
    CONFLICT,
    NO_CREDENTIALS,
    NO_PAGE,
    NOT_ADMIN,
    NOT_FOUND,
    AdminApi,
    ProgressOut,
    Refused,
    _conflict,
    _link,
    _progress,
    _refuse,
)
from annotator.api_fields import Flag, Text
from annotator.models import ItemSet, Round
from annotator.round_selectors import (
    annotator_choices,
    parser_coverage,
    round_annotators,
    rounds_with_progress,
)
from annotator.selectors import Progress
from annotator.services import (
    RoundError,
    round_annotator_add,
    round_annotator_remove,
    round_create,
)

SMALL_INT = 2**15 - 1


# The round's choices as plain value lists: the prefill job's "mode" and "text_field" have other
# values, so the schema names these apart (the mode's enum is RoundModeEnum through
# SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"], which matches this list).
MODES = [value for value, _label in Round.Mode.choices]


TEXT_FIELDS = [value for value, _label in Round.TEXT_FIELDS]


@extend_schema_field({"type": "string", "enum": MODES})
class ModeField(serializers.ChoiceField):
    pass


@extend_schema_field({"type": "string", "enum": TEXT_FIELDS})
class TextFieldField(serializers.ChoiceField):
    pass


@extend_schema_field(
    {"oneOf": [{"type": "string", "minLength": 1, "maxLength": 150}, {"type": "integer", "minimum": 1}]}
)
class AnnotatorRef(serializers.CharField):
    """An annotator by username, or by id: a JSON integer is an id, as the docs promise."""

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, bool) or not isinstance(data, (str, int)):
            self.fail("invalid")
        return super().to_internal_value(data)


class AnnotatorsField(serializers.ListField):
    """Usernames or ids of active annotators, repeated or comma-separated (usernames hold no
    comma). Resolved to users in the order given."""

    child = AnnotatorRef(max_length=150)

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
                _("no active annotator named (or with the id) %(names)s")
                % {"names": ", ".join(map(repr, unknown[:10]))}
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
    show_routed_label = Flag(default=False)
    prefill_parser = Text(
        max_length=300, required=False, allow_blank=True, default="", help_text="prefilled rounds"
    )
    allow_prefill_overlap = Flag(
        default=False, help_text="create a blind round even over items its annotators saw prefilled"
    )


class RoundIn(RoundOptionsIn):
    name = Text(max_length=100)
    item_set = serializers.PrimaryKeyRelatedField(queryset=ItemSet.objects.all(), help_text="item set id")


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


def _create_round(data: dict[str, Any], *, name: str, item_set: ItemSet) -> Round:
    parser = data["prefill_parser"]
    if data["mode"] == Round.Mode.PREFILLED and parser:
        # as the new-round page offers them: parsers with legal predictions for the set's items
        offered = [c.parser for c in parser_coverage(item_set)]
        if parser not in offered:  # (one read from another text field: round_create names it)
            shown = ", ".join(offered) or _("none")
            raise Refused(
                400,
                {
                    "prefill_parser": [
                        _("%(parser)s has no legal prediction for this item set; parsers: %(parsers)s")
                        % {"parser": repr(parser), "parsers": shown}
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


class RoundList(generics.ListAPIView, AdminApi):
    """Rounds, newest first, each with its progress; POST creates one with its assignments."""

    serializer_class = RoundListOut

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # the schema generator reads no database
            return Round.objects.none()
        rows = rounds_with_progress()
        for row in rows:
            row.round.progress = _progress(row.progress)
            row.round.pool_size = row.pool_size
        return [row.round for row in rows]

    @extend_schema(
        responses={200: RoundListOut(many=True), 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NO_PAGE}
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=RoundIn,
        responses={201: RoundDetailOut, 400: BAD, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 409: CONFLICT},
    )
    def post(self, request: Request) -> Response:
        form = RoundIn(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        round_ = _create_round(data, name=data["name"], item_set=data["item_set"])
        out = RoundDetailOut(_round_detail(round_), context={"request": request}).data
        return Response(out, status=status.HTTP_201_CREATED)


def _round(pk: int) -> Round:
    return get_object_or_404(Round.objects.select_related("item_set"), pk=pk)


class RoundDetail(AdminApi):
    @extend_schema(responses={200: RoundDetailOut, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NOT_FOUND})
    def get(self, request: Request, pk: int) -> Response:
        return Response(RoundDetailOut(_round_detail(_round(pk)), context={"request": request}).data)


class PoolAddIn(serializers.Serializer):
    annotator = AnnotatorRef(max_length=150, help_text="username or id of an active annotator")


def _pool_answer(request: Request, round_: Round, change: Any) -> Response:
    body = {
        "moved": change.moved, "uncovered": change.uncovered,
        "received": change.received, "given": change.given,
        "summary": change.summary(), "round": _round_detail(_round(round_.pk)),
    }  # fmt: skip
    return Response(PoolChangeOut(body, context={"request": request}).data)


class RoundPoolAdd(AdminApi):
    """Add an annotator to the pool; they receive a fair share of the pending work."""

    @extend_schema(
        request=PoolAddIn,
        responses={
            200: PoolChangeOut, 400: BAD, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NOT_FOUND,
            409: OpenApiResponse(description="already in the pool"),
        },
    )  # fmt: skip
    def post(self, request: Request, pk: int) -> Response:
        round_ = _round(pk)
        form = PoolAddIn(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            found = AnnotatorsField().to_internal_value([form.validated_data["annotator"]])
        except serializers.ValidationError as error:
            return Response({"annotator": error.detail}, status=status.HTTP_400_BAD_REQUEST)
        if len(found) != 1:
            return Response({"annotator": [_("name one annotator")]}, status=status.HTTP_400_BAD_REQUEST)
        annotator = found[0]
        try:
            change = round_annotator_add(round_=round_, annotator=annotator)
        except RoundError as error:
            return _refuse(_conflict("annotator", str(error)))
        return _pool_answer(request, round_, change)


class RoundPoolRemove(AdminApi):
    """Take an annotator out of the pool: their done work stays, their pending work moves to
    the others (items nobody eligible can take are left with fewer annotators)."""

    @extend_schema(
        request=None,
        responses={
            200: PoolChangeOut, 401: NO_CREDENTIALS, 403: NOT_ADMIN,
            404: OpenApiResponse(description="no such round or user"),
            409: OpenApiResponse(description="not in the pool"),
        },
    )  # fmt: skip
    def delete(self, request: Request, pk: int, user: str) -> Response:
        round_ = _round(pk)
        found = User.objects.filter(username=user).first()
        if found is None and user.isascii() and user.isdigit() and len(user) < 19:
            found = User.objects.filter(pk=int(user)).first()
        if found is None:
            return Response(
                {"detail": _("no user %(user)s") % {"user": repr(user)}}, status=status.HTTP_404_NOT_FOUND
            )
        try:
            change = round_annotator_remove(round_=round_, annotator=found)
        except RoundError as error:
            return _refuse(_conflict("annotator", str(error)))
        return _pool_answer(request, round_, change)
