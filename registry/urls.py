from django.urls import path

from registry import api, views

urlpatterns = [
    path("parsers/", views.parser_list, name="parsers"),
    path("parsers/<str:name>/", views.parser_newest, name="parser_newest"),
    path("parsers/<str:name>/<id:version>/", views.parser_detail, name="parser_detail"),
    path("api/parsers/", api.ParserList.as_view(), name="api_parsers"),
    path("api/parsers/<id:pk>/", api.ParserDetail.as_view(), name="api_parser"),
]
