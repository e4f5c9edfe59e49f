"""Webhooks' pages, for admins: the hooks with a form for a new one (its secret shown once, on the
hook's page it leads to), a hook's page with its deliveries log (refreshed by htmx while a
delivery is pending), and the actions: activate or deactivate, delete, send a test ping, send a
delivery again. Every form posts and redirects without JavaScript; with htmx, ping and "Send
again" answer the log alone."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotator.roles import ADMIN, require_role
from webhooks.forms import WebhookForm
from webhooks.models import Delivery, Webhook
from webhooks.selectors import LOG_SIZE, webhook_deliveries, webhooks_listed
from webhooks.services import (
    WebhookError,
    delivery_redeliver,
    webhook_create,
    webhook_delete,
    webhook_ping,
    webhook_update,
)

SHOW_ONCE = "nsm-webhook-secret"  # the session key holding a new hook's secret until its page shows it


@require_role(ADMIN)
def webhooks(request: HttpRequest) -> HttpResponse:
    """GET: every hook and the form. POST: a new hook, then its page with the secret shown once;
    or 400 naming the problem."""
    form = WebhookForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                hook = webhook_create(user=request.user, **form.cleaned_data)
            except WebhookError as error:
                form.add_error(error.field if error.field in form.fields else None, str(error))
            else:
                request.session[SHOW_ONCE] = {"id": hook.pk, "secret": hook.secret}
                return redirect("webhook", hook.pk)
        status = 400
    return render(request, "webhooks/hooks.html", {"hooks": webhooks_listed(), "form": form}, status=status)


def _hook(pk: int) -> Webhook:
    return get_object_or_404(Webhook.objects.select_related("created_by"), pk=pk)


def _log_context(hook: Webhook, note: str = "") -> dict:
    deliveries = list(webhook_deliveries(hook)[:LOG_SIZE])
    return {
        "hook": hook,
        "deliveries": deliveries,
        "watching": any(d.state == Delivery.State.PENDING for d in deliveries),
        "note": note,
    }


@never_cache
@require_role(ADMIN)
def webhook(request: HttpRequest, pk: int) -> HttpResponse:
    """A hook: its URL, events and state, the actions, and its deliveries log; the secret of a
    hook just made, this once."""
    hook = _hook(pk)
    context = _log_context(hook)
    made = request.session.pop(SHOW_ONCE, None)
    context["secret"] = made["secret"] if made and made.get("id") == hook.pk else ""
    return render(request, "webhooks/hook.html", context)


@require_role(ADMIN)
def webhook_deliveries_log(request: HttpRequest, pk: int) -> HttpResponse:
    """The deliveries log alone (htmx refreshes it while a delivery is pending)."""
    return render(request, "webhooks/_deliveries.html", _log_context(_hook(pk)))


def _answer(request: HttpRequest, hook: Webhook, note: str, *, ok: bool = True) -> HttpResponse:
    """htmx: the log with the note above it (200 either way: htmx swaps no 4xx). Otherwise: done,
    the note as a message on the hook's page it redirects to; refused, that page with the reason
    and 409."""
    if request.htmx:
        return render(request, "webhooks/_deliveries.html", {**_log_context(hook, note), "refused": not ok})
    if ok:
        messages.success(request, note)
        return redirect("webhook", hook.pk)
    return render(request, "webhooks/hook.html", {**_log_context(hook), "refused": note}, status=409)


@require_POST
@require_role(ADMIN)
def webhook_ping_view(request: HttpRequest, pk: int) -> HttpResponse:
    hook = _hook(pk)
    try:
        sent = webhook_ping(webhook=hook)
    except WebhookError as error:
        return _answer(request, hook, str(error), ok=False)
    return _answer(request, hook, _("Ping queued as delivery #%(id)s.") % {"id": sent.pk})


@require_POST
@require_role(ADMIN)
def delivery_redeliver_view(request: HttpRequest, pk: int, delivery_id: int) -> HttpResponse:
    hook = _hook(pk)
    delivery = get_object_or_404(Delivery.objects.select_related("webhook"), pk=delivery_id, webhook=hook)
    try:
        again = delivery_redeliver(delivery=delivery)
    except WebhookError as error:
        return _answer(request, hook, str(error), ok=False)
    return _answer(
        request,
        hook,
        _("Delivery #%(old)s queued again as #%(new)s.") % {"old": delivery.pk, "new": again.pk},
    )


@require_POST
@require_role(ADMIN)
def webhook_active_view(request: HttpRequest, pk: int) -> HttpResponse:
    hook = _hook(pk)
    value = request.POST.get("active", "")
    if value not in ("0", "1"):
        refused = _("active: send 1 to activate or 0 to deactivate")
        return render(request, "webhooks/hook.html", {**_log_context(hook), "refused": refused}, status=400)
    webhook_update(webhook=hook, active=value == "1")
    messages.success(request, _("Webhook activated.") if hook.active else _("Webhook deactivated."))
    return redirect("webhook", hook.pk)


@require_POST
@require_role(ADMIN)
def webhook_delete_view(request: HttpRequest, pk: int) -> HttpResponse:
    hook = _hook(pk)
    url = hook.url
    webhook_delete(webhook=hook)
    messages.success(request, _("Webhook for %(url)s deleted, with its deliveries.") % {"url": url})
    return redirect("webhooks")
