"""The OpenAPI schema lists every status code an operation answers with (config/schema.py): the
error codes follow from what each view declares, an explicit response wins, and the answers the
fuzzer found undocumented are documented (tests/integration/test_api_fuzz.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import path
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api import ItemSerializer
from annotator.filters import ItemFilter
from annotator.models import Item

METHODS = {"get", "post", "put", "patch", "delete"}


def generated(patterns: list | None = None) -> dict[str, Any]:
    return SchemaGenerator(patterns=patterns).get_schema(request=None, public=True)


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), route, op)
        for route, ops in schema["paths"].items()
        for method, op in ops.items()
        if method in METHODS
    ]


def body_schema(response: dict[str, Any]) -> dict[str, Any]:
    return response["content"]["application/json"]["schema"]


class IsEditor(BasePermission):
    message = "only editors change things"

    def has_permission(self, request, view) -> bool:
        return False


class ThingIn(serializers.Serializer):
    name = serializers.CharField()


class Things(APIView):
    authentication_classes = [SessionAuthentication]  # sessions alone: no credentials is a 403
    permission_classes = [IsAuthenticated & IsEditor]

    @extend_schema(responses={200: ThingIn})
    def get(self, request, pk: int) -> Response:
        return Response({})

    @extend_schema(
        request=ThingIn,
        responses={
            200: ThingIn,
            409: OpenApiResponse(description="someone else changed it first"),
            400: ThingIn,
        },
    )
    def post(self, request, pk: int) -> Response:
        return Response({})


class TokenThings(Things):
    authentication_classes = [TokenAuthentication, SessionAuthentication]


class OpenThings(APIView):
    permission_classes = [AllowAny]
    authentication_classes = [SessionAuthentication]

    @extend_schema(responses={200: ThingIn})
    def get(self, request) -> Response:
        return Response({})


class OpenTokenThings(OpenThings):
    authentication_classes = [TokenAuthentication]


class ThingList(generics.ListAPIView):
    serializer_class = ItemSerializer
    queryset = Item.objects.all()
    filterset_class = ItemFilter


def test_every_operation_of_the_app_lists_what_an_unauthenticated_request_gets():
    """Session authentication comes first: DRF answers 403 (it has no WWW-Authenticate scheme
    for a 401). Once a header scheme (a token) comes first, it is 401. An operation open to
    anyone says so in its security (``{}``) and needs neither."""
    ops = operations(generated())
    missing = [
        f"{method} {route}"
        for method, route, op in ops
        if {} not in op.get("security", [{}]) and not {"401", "403"} & set(op["responses"])
    ]
    assert missing == []
    assert len(ops) >= 24  # the API's operations are all there: this checked something


def test_every_error_response_of_the_app_has_a_json_body_to_check():
    bare = [
        f"{method} {route} {code}"
        for method, route, op in operations(generated())
        for code, response in op["responses"].items()
        if code >= "400" and "content" not in response
    ]
    assert bare == []


def test_session_authentication_documents_403_for_no_credentials_and_no_401():
    op = generated([path("things/<int:pk>/", Things.as_view())])["paths"]["/things/{id}/"]["get"]
    assert "401" not in op["responses"]
    assert (
        "no credentials (session authentication answers 403, not 401)"
        in op["responses"]["403"]["description"]
    )


def test_a_token_scheme_first_documents_401_with_its_header():
    op = generated([path("things/<int:pk>/", TokenThings.as_view())])["paths"]["/things/{id}/"]["get"]
    unauthenticated = op["responses"]["401"]
    assert unauthenticated["description"] == "no credentials; bad credentials"
    assert unauthenticated["headers"]["WWW-Authenticate"]["required"] is True
    # still 403 for a role refused
    assert "only editors change things" in op["responses"]["403"]["description"]


def test_roles_csrf_and_unknown_ids_each_say_why():
    ops = generated([path("things/<int:pk>/", Things.as_view())])["paths"]["/things/{id}/"]
    refused = ops["get"]["responses"]["403"]["description"]
    assert "only editors change things" in refused and "CSRF" not in refused
    assert "CSRF" in ops["post"]["responses"]["403"]["description"]  # an unsafe method by session
    assert ops["get"]["responses"]["404"]["description"] == "no such object, or not yours"
    assert body_schema(ops["get"]["responses"]["404"]) == {"$ref": "#/components/schemas/ErrorOut"}


def test_an_operation_open_to_anyone_lists_no_refusal_but_a_bad_token():
    op = generated([path("open/", OpenThings.as_view())])["paths"]["/open/"]["get"]
    assert set(op["responses"]) == {"200"}
    op = generated([path("open/", OpenTokenThings.as_view())])["paths"]["/open/"]["get"]
    assert set(op["responses"]) == {"200", "401"}
    assert op["responses"]["401"]["description"] == "bad credentials"


def test_a_filtered_paginated_list_documents_a_bad_filter_and_a_page_past_the_last():
    op = generated([path("things/", ThingList.as_view())])["paths"]["/things/"]["get"]
    assert body_schema(op["responses"]["400"]) == {"$ref": "#/components/schemas/ValidationError"}
    assert op["responses"]["404"]["description"] == "a page past the last"


def test_explicit_responses_win_and_a_bare_description_gets_the_error_body():
    schema = generated([path("things/<int:pk>/", Things.as_view())])
    responses = schema["paths"]["/things/{id}/"]["post"]["responses"]
    assert body_schema(responses["400"]) == {"$ref": "#/components/schemas/ThingIn"}  # the view's own
    assert responses["409"]["description"] == "someone else changed it first"
    assert body_schema(responses["409"]) == {"$ref": "#/components/schemas/ErrorOut"}
    assert schema["components"]["schemas"]["ErrorOut"]["required"] == ["detail"]


def test_the_schema_view_documents_an_unknown_format():
    op = generated()["paths"]["/api/schema/"]["get"]
    assert "an unknown format" in op["responses"]["404"]["description"]


def test_int_and_str_path_parameters_say_what_the_url_matches():
    schema = generated()
    item = schema["paths"]["/api/items/{id}/"]["get"]["parameters"][0]["schema"]
    version = schema["paths"]["/api/rule-sets/{version}/"]["get"]["parameters"]
    assert item == {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}  # an id: annotator.converters
    assert next(p for p in version if p["name"] == "version")["schema"]["pattern"] == "^[^/]+$"


@pytest.mark.django_db
def test_an_unknown_api_url_is_a_json_404_and_a_page_stays_a_page(client, annotator):
    client.force_login(annotator)
    response = client.get("/api/items/-1/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


# What the fuzzer found: answers the schema did not list, each checked on the app itself.


def responses_of(route: str, method: str) -> dict[str, Any]:
    return generated()["paths"][route][method]["responses"]


@pytest.mark.django_db
def test_the_packaged_rule_set_version_has_no_parent_nor_author_and_the_schema_allows_it(client, adjudicator):
    client.force_login(adjudicator)
    rows = client.get("/api/rule-sets/").json()
    assert [(r["version"], r["parent"], r["created_by"]) for r in rows] == [("1", None, None)]
    props = generated()["components"]["schemas"]["VersionOut"]["properties"]
    assert props["parent"]["nullable"] is True and props["created_by"]["nullable"] is True


@pytest.mark.django_db
def test_activating_the_active_version_is_a_documented_409(client, admin_user):
    client.force_login(admin_user)
    response = client.post("/api/rule-sets/1/activate/")
    assert response.status_code == 409 and "detail" in response.json()
    assert "409" in responses_of("/api/rule-sets/{version}/activate/", "post")


@pytest.mark.django_db
def test_a_rule_set_compared_on_an_unknown_parser_is_a_documented_400(client, adjudicator):
    client.force_login(adjudicator)
    response = client.get("/api/rule-sets/1/", {"pass": "nope"})
    assert response.status_code == 400 and "pass" in response.json()["detail"]
    assert "400" in responses_of("/api/rule-sets/{version}/", "get")


@pytest.mark.parametrize(
    ("analysis", "query", "named"),
    [
        ("flows", {"a": "annotator:nobody"}, "choose two passes"),
        ("conflicts", {"slot": "colour"}, "unknown slot"),
        ("evaluation", {"decay": "0"}, "decay"),
    ],
)
def test_a_round_analysis_asked_for_something_it_has_not_is_a_documented_400(
    client, adjudicator, submitted, analysis, query, named
):
    client.force_login(adjudicator)
    response = client.get(f"/api/rounds/{submitted.pk}/{analysis}/", query)
    assert response.status_code == 400 and named in response.json()["detail"]
    assert "400" in responses_of(f"/api/rounds/{{round_id}}/{analysis}/", "get")


@pytest.mark.django_db
def test_a_body_in_a_media_type_the_operation_does_not_read_is_a_documented_415(
    client, annotator, prefilled_round
):
    assignment = prefilled_round.assignments.filter(annotator=annotator).first()
    client.force_login(annotator)
    url = f"/api/assignments/{assignment.pk}/annotation/"
    response = client.post(url, "agency=i", content_type="text/plain")
    assert response.status_code == 415 and "detail" in response.json()
    assert "415" in responses_of("/api/assignments/{id}/annotation/", "post")
    assert "415" not in responses_of("/api/rule-sets/{version}/activate/", "post")  # reads no body
