"""Admin pages for accounts: list, create, roles, deactivate."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotator.forms import ActiveForm, RolesForm, UserCreateForm
from annotator.roles import ADMIN, ROLES, require_role
from annotator.user_services import NewUser, UserError, user_active_set, user_create, user_roles_set


def _users_page(
    request: HttpRequest,
    *,
    form: UserCreateForm | None = None,
    created: NewUser | None = None,
    problem: tuple[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    users = User.objects.prefetch_related("groups").order_by("username")
    rows = [(u, {g.name for g in u.groups.all()} & set(ROLES)) for u in users]
    return render(
        request,
        "annotator/manage_users.html",
        {
            "form": form or UserCreateForm(),
            "created": created,
            "problem": problem,
            "rows": rows,
            # not "roles": that is the signed-in user's own roles (context processor; header, menu)
            "role_names": ROLES,
        },
        status=status,
    )


@require_role(ADMIN)
def users(request: HttpRequest) -> HttpResponse:
    """The list of users, and the form that creates one (a generated password is shown once,
    on the page that answers the POST, and kept nowhere)."""
    if request.method != "POST":
        return _users_page(request)
    form = UserCreateForm(request.POST)
    if not form.is_valid():
        return _users_page(request, form=form, status=400)
    data = form.cleaned_data
    try:
        created = user_create(
            username=data["username"], email=data["email"], password=data["password"], roles=data["roles"]
        )
    except UserError as error:
        form.add_error(error.field if error.field in form.fields else None, str(error))
        return _users_page(request, form=form, status=400)
    return _users_page(request, created=created)


@require_role(ADMIN)
@require_POST
def user_roles(request: HttpRequest, user_id: int) -> HttpResponse:
    user = get_object_or_404(User, pk=user_id)
    form = RolesForm(request.POST)
    if not form.is_valid():
        message = " ".join(form.errors["roles"])
        problem = _("%(user)s: %(problem)s") % {"user": user.username, "problem": message}
        return _users_page(request, problem=("roles", problem), status=400)
    try:
        user_roles_set(user=user, roles=form.cleaned_data["roles"], by=request.user)
    except UserError as error:
        return _users_page(request, problem=(error.field, str(error)), status=400)
    roles = [r for r in ROLES if r in form.cleaned_data["roles"]]
    shown = ", ".join(roles) or _("no role")
    messages.success(request, _("%(user)s: %(roles)s") % {"user": user.username, "roles": shown})
    return redirect("manage_users")


@require_role(ADMIN)
@require_POST
def user_active(request: HttpRequest, user_id: int) -> HttpResponse:
    user = get_object_or_404(User, pk=user_id)
    form = ActiveForm(request.POST)
    if not form.is_valid():
        return _users_page(request, problem=("active", _("say active=1 or active=0")), status=400)
    try:
        user_active_set(user=user, active=form.cleaned_data["active"], by=request.user)
    except UserError as error:
        return _users_page(request, problem=(error.field, str(error)), status=400)
    if user.is_active:
        done = _("%(user)s is reactivated")
    else:
        done = _("%(user)s is deactivated: they can no longer log in; their work is kept")
    messages.success(request, done % {"user": user.username})
    return redirect("manage_users")


@require_POST
@require_role(ADMIN)
def user_password(request: HttpRequest, user_id: int) -> HttpResponse:
    """An admin sets a new password for a user (Django's validators apply); the user is told it
    out of band and can change it on their account page."""
    user = get_object_or_404(User, pk=user_id)
    form = SetPasswordForm(user, request.POST)
    if not form.is_valid():
        problems = "; ".join(str(e) for errors in form.errors.values() for e in errors)
        problem = _("%(user)s: %(problem)s") % {"user": user.username, "problem": problems}
        return _users_page(request, problem=("password", problem), status=400)
    form.save()
    messages.success(
        request,
        _("%(user)s has a new password: tell them, and ask them to change it.") % {"user": user.username},
    )
    return redirect("manage_users")
