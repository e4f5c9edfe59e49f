from django.urls import path

from adjudication.evaluation import api, views

urlpatterns = [
    path(
        "adjudicate/rounds/<id:round_id>/evaluation/",
        views.evaluation_page,
        name="evaluation",
    ),
    path(
        "adjudicate/rounds/<id:round_id>/evaluation/<slug:table>.csv",
        views.evaluation_csv,
        name="evaluation_csv",
    ),
    path("api/rounds/<id:round_id>/evaluation/", api.Evaluation.as_view(), name="api_evaluation"),
]
