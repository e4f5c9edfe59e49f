from django.http import HttpRequest

from annotator.roles import user_roles


def roles(request: HttpRequest) -> dict[str, frozenset[str]]:
    return {"roles": user_roles(request.user)}
