from django.urls import path

from adjudication.conventions import api, views

urlpatterns = [
    path("guidelines/", views.guidelines, name="guidelines"),  # with the accepted conventions
    path("adjudicate/conventions/", views.conventions, name="conventions"),
    path("adjudicate/conventions/<id:convention_id>/", views.convention_detail, name="convention"),
    path(
        "adjudicate/conventions/<id:convention_id>/vote/",
        views.convention_vote_view,
        name="convention_vote",
    ),
    path(
        "adjudicate/conventions/<id:convention_id>/apply/",
        views.convention_apply_view,
        name="convention_apply",
    ),
    path(
        "adjudicate/conventions/<id:convention_id>/revise/",
        views.convention_revise_view,
        name="convention_revise",
    ),
    path(
        "adjudicate/conventions/<id:convention_id>/withdraw/",
        views.convention_withdraw_view,
        name="convention_withdraw",
    ),
    path("api/conventions/", api.ConventionList.as_view(), name="api_conventions"),
    path(
        "api/conventions/<id:convention_id>/",
        api.ConventionDetail.as_view(),
        name="api_convention",
    ),
    path(
        "api/conventions/<id:convention_id>/vote/",
        api.ConventionVote.as_view(),
        name="api_convention_vote",
    ),
    path(
        "api/conventions/<id:convention_id>/apply/",
        api.ConventionApply.as_view(),
        name="api_convention_apply",
    ),
    path(
        "api/conventions/<id:convention_id>/withdraw/",
        api.ConventionWithdraw.as_view(),
        name="api_convention_withdraw",
    ),
    path(
        "api/conventions/<id:convention_id>/revise/",
        api.ConventionRevise.as_view(),
        name="api_convention_revise",
    ),
]
