"""Rule revision pages and API, under rules/ and api/rule-sets/ (included from config/urls.py)."""

from django.urls import path

from adjudication import rule_revision_api, rule_revision_views

V = "versions/<str:version>/"

urlpatterns = [
    path("rules/propose/", rule_revision_views.rule_revision_new, name="rule_revision_new"),
    path(f"rules/{V}", rule_revision_views.rule_revision, name="rule_revision"),
    path(f"rules/{V}vote/", rule_revision_views.rule_revision_vote, name="rule_revision_vote"),
    path(f"rules/{V}activate/", rule_revision_views.rule_revision_activate, name="rule_revision_activate"),
    path(f"rules/{V}reopen/", rule_revision_views.rule_revision_reopen, name="rule_revision_reopen"),
    path(f"rules/{V}withdraw/", rule_revision_views.rule_revision_withdraw, name="rule_revision_withdraw"),
    path("api/rule-sets/", rule_revision_api.RuleSetList.as_view(), name="api_rule_sets"),
    path("api/rule-sets/<str:version>/", rule_revision_api.RuleSetDetail.as_view(), name="api_rule_set"),
    path(
        "api/rule-sets/<str:version>/vote/",
        rule_revision_api.RuleSetVoteView.as_view(),
        name="api_rule_set_vote",
    ),
    path(
        "api/rule-sets/<str:version>/activate/",
        rule_revision_api.RuleSetActivate.as_view(),
        name="api_rule_set_activate",
    ),
]
