"""Webhooks through the API, for admins: list and register hooks (the secret in the answer to the
registration only), read, change and delete one, send it a test ping, page through its
deliveries, read one, and send one again. Bodies are JSON, typed strictly (annotator.api_fields);
an unknown field is refused by name, a bad value is a 400 naming its field, and nothing is
written either way. Pinging or re-sending through an inactive hook is a 409."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotator.api_fields import Flag, Text, read_body
from annotator.roles import ADMIN, HasRole
from webhooks.models import ALL, EVENTS, URL_MAX, URL_PATTERN, Delivery, Webhook
from webhooks.selectors import webhook_deliveries, webhooks_listed
from webhooks.services import (
    delivery_redeliver,
    webhook_create,
    webhook_delete,
    webhook_ping,
    webhook_update,
)

IsAdmin = HasRole(ADMIN, message=gettext_lazy("webhooks are for admins"))

DENIED = {
    401: OpenApiResponse(description="not signed in (with an authentication that asks for credentials)"),
    403: OpenApiResponse(description="not signed in, or not an admin"),
}
NOT_FOUND = {404: OpenApiResponse(description="no such webhook or delivery")}
BAD = {400: OpenApiResponse(description="bad values: each named, with the reason")}
INACTIVE = {409: OpenApiResponse(description="the webhook is inactive: activate it first")}

EVENT_CHOICES = [ALL, *EVENTS]


class _View(APIView):
    permission_classes = [IsAuthenticated, IsAdmin]
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES[:1]  # JSON only (config.parsers)


# Answers ---------------------------------------------------------------------------------------


class WebhookOut(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(
        child=serializers.CharField(), help_text='event names, or ["*"]: every event'
    )
    active = serializers.BooleanField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    created_at = serializers.DateTimeField()


class WebhookMadeOut(WebhookOut):
    secret = serializers.CharField(help_text="signs every delivery; shown only in this answer")


class DeliveryOut(serializers.Serializer):
    id = serializers.IntegerField(help_text="sent as X-NSM-Delivery")
    webhook = serializers.IntegerField(source="webhook_id")
    event = serializers.CharField()
    state = serializers.ChoiceField(choices=Delivery.State.values)
    attempts = serializers.IntegerField()
    status_code = serializers.IntegerField(allow_null=True, help_text="the last attempt's; null: no answer")
    duration_ms = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(help_text="why the last attempt failed; empty when it did not")
    response = serializers.CharField(help_text="the first 2 KB of the last answer")
    payload = serializers.JSONField()
    body = serializers.CharField(help_text="the JSON body sent (the same on every attempt)")
    created_at = serializers.DateTimeField()
    attempted_at = serializers.DateTimeField(allow_null=True)
    next_attempt_at = serializers.DateTimeField(
        allow_null=True, help_text="pending: when the next attempt is due"
    )
    delivered_at = serializers.DateTimeField(allow_null=True)
    redelivery_of = serializers.IntegerField(source="redelivery_of_id", allow_null=True)


# Requests --------------------------------------------------------------------------------------


@extend_schema_field(
    {
        "type": "string",
        "maxLength": URL_MAX,
        "pattern": URL_PATTERN,
        "description": "http or https, a host name or IPv4 address, an optional port; printable ASCII",
    }
)
class HookUrl(Text):
    """The schema states URL_PATTERN; the service checks it and names what is wrong (not file, no
    host...) where the serializer's own check could say only that the pattern does not match."""


URL_HELP = (
    "http or https, where each event is POSTed; not this machine or a private network (loopback, "
    "RFC 1918, link-local) unless the server sets NSM_WEBHOOK_ALLOW_PRIVATE"
)


class WebhookIn(serializers.Serializer):
    refuses_unknown_fields = True
    url = HookUrl(max_length=URL_MAX, help_text=URL_HELP)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES),
        min_length=1,
        max_length=len(EVENT_CHOICES),
        help_text='the events to send: their names, or ["*"] for every event',
    )
    active = Flag(required=False, default=True)


class WebhookChangeIn(WebhookIn):
    url = HookUrl(max_length=URL_MAX, required=False, help_text=URL_HELP)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES),
        min_length=1,
        max_length=len(EVENT_CHOICES),
        required=False,
        help_text='the events to send: their names, or ["*"] for every event',
    )
    active = Flag(required=False)


def _hook(pk: int) -> Webhook:
    return get_object_or_404(Webhook.objects.select_related("created_by"), pk=pk)


# Views -----------------------------------------------------------------------------------------


class WebhookList(_View):
    @extend_schema(responses={200: WebhookOut(many=True), **DENIED})
    def get(self, request: Request) -> Response:
        return Response(WebhookOut(webhooks_listed(), many=True).data)

    @extend_schema(
        request=WebhookIn,
        responses={201: WebhookMadeOut, **BAD, **DENIED},
        description="Register a hook. The answer holds its secret, which no later answer shows.",
    )
    def post(self, request: Request) -> Response:
        values = read_body(WebhookIn, request)
        if isinstance(values, Response):
            return values
        hook = webhook_create(user=request.user, **values)
        return Response(WebhookMadeOut(_hook(hook.pk)).data | {"secret": hook.secret}, status=201)


class WebhookDetail(_View):
    @extend_schema(responses={200: WebhookOut, **DENIED, **NOT_FOUND})
    def get(self, request: Request, pk: int) -> Response:
        return Response(WebhookOut(_hook(pk)).data)

    @extend_schema(
        request=WebhookChangeIn,
        responses={200: WebhookOut, **BAD, **DENIED, **NOT_FOUND},
        description="Change the URL, the events or the active flag (those given). An inactive hook gets "
        "no new deliveries; its pending ones fail at their next attempt.",
    )
    def patch(self, request: Request, pk: int) -> Response:
        hook = _hook(pk)
        values = read_body(WebhookChangeIn, request)
        if isinstance(values, Response):
            return values
        webhook_update(webhook=hook, **values)
        return Response(WebhookOut(_hook(pk)).data)

    @extend_schema(
        request=None,
        responses={204: OpenApiResponse(description="deleted, with its deliveries"), **DENIED, **NOT_FOUND},
    )
    def delete(self, request: Request, pk: int) -> Response:
        webhook_delete(webhook=_hook(pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookPing(_View):
    @extend_schema(
        request=None,
        responses={202: DeliveryOut, **DENIED, **NOT_FOUND, **INACTIVE},
        description="Queue a ping delivery (event 'ping') to the hook; its outcome shows in its deliveries.",
    )
    def post(self, request: Request, pk: int) -> Response:
        return Response(DeliveryOut(webhook_ping(webhook=_hook(pk))).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(responses={200: DeliveryOut, **DENIED, **NOT_FOUND})
class DeliveryList(generics.ListAPIView):
    """A hook's deliveries, newest first, each with its last attempt's outcome and the body sent."""

    permission_classes = [IsAuthenticated, IsAdmin]
    serializer_class = DeliveryOut
    queryset = Delivery.objects.none()  # the schema's; each request reads its hook's (get_queryset)

    def get_queryset(self):
        return webhook_deliveries(_hook(self.kwargs["pk"]))


class DeliveryDetail(_View):
    @extend_schema(responses={200: DeliveryOut, **DENIED, **NOT_FOUND})
    def get(self, request: Request, pk: int, delivery_id: int) -> Response:
        return Response(DeliveryOut(get_object_or_404(Delivery, pk=delivery_id, webhook_id=pk)).data)


class DeliveryRedeliver(_View):
    @extend_schema(
        request=None,
        responses={202: DeliveryOut, **DENIED, **NOT_FOUND, **INACTIVE},
        description="Send the delivery again: a new delivery of the same event and body, queued for the "
        "worker; the first keeps its log.",
    )
    def post(self, request: Request, pk: int, delivery_id: int) -> Response:
        delivery = get_object_or_404(
            Delivery.objects.select_related("webhook"), pk=delivery_id, webhook_id=pk
        )
        again = delivery_redeliver(delivery=delivery)
        return Response(DeliveryOut(again).data, status=status.HTTP_202_ACCEPTED)
