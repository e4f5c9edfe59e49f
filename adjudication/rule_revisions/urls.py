"""Rule revision pages, mounted under rules/ beside the active rule set's page, and their API,
under api/rule-sets/: config/urls.py lays out both spaces in one place."""

from django.urls import path

from adjudication.rule_revisions import api, views

V = "versions/<str:version>/"

urlpatterns = [
    path("propose/", views.rule_revision_new, name="rule_revision_new"),
    path(f"{V}", views.rule_revision, name="rule_revision"),
    path(f"{V}vote/", views.rule_revision_vote, name="rule_revision_vote"),
    path(f"{V}activate/", views.rule_revision_activate, name="rule_revision_activate"),
    path(f"{V}reopen/", views.rule_revision_reopen, name="rule_revision_reopen"),
    path(f"{V}withdraw/", views.rule_revision_withdraw, name="rule_revision_withdraw"),
]

api = [
    path("", api.RuleSetList.as_view(), name="api_rule_sets"),
    path("<str:version>/", api.RuleSetDetail.as_view(), name="api_rule_set"),
    path(
        "<str:version>/vote/",
        api.RuleSetVoteView.as_view(),
        name="api_rule_set_vote",
    ),
    path(
        "<str:version>/activate/",
        api.RuleSetActivate.as_view(),
        name="api_rule_set_activate",
    ),
]
