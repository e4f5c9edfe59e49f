from django.urls import path

from adjudication import (
    analytics_api,
    analytics_views,
    convention_api,
    evaluation_api,
    evaluation_views,
    gold_api,
    gold_views,
)

urlpatterns = [
    path("adjudicate/", analytics_views.rounds, name="adjudicate"),
    path("adjudicate/rounds/<int:round_id>/", analytics_views.dashboard, name="agreement"),
    path("adjudicate/rounds/<int:round_id>/conflicts/", analytics_views.conflict_list, name="conflicts"),
    path(
        "adjudicate/rounds/<int:round_id>/items/<int:item_id>/",
        analytics_views.item_view,
        name="conflict_item",
    ),
    path("adjudicate/rounds/<int:round_id>/flows/", analytics_views.flow_table, name="flows"),
    path("adjudicate/rounds/<int:round_id>/anchoring/", analytics_views.anchoring_table, name="anchoring"),
    path(
        "adjudicate/rounds/<int:round_id>/agreement.csv", analytics_views.agreement_csv, name="agreement_csv"
    ),
    path(
        "adjudicate/rounds/<int:round_id>/conflicts.csv", analytics_views.conflicts_csv, name="conflicts_csv"
    ),
    path("adjudicate/rounds/<int:round_id>/flows.csv", analytics_views.flows_csv, name="flows_csv"),
    path("adjudicate/rounds/<int:round_id>/passes.csv", analytics_views.passes_csv, name="passes_csv"),
    path(
        "adjudicate/rounds/<int:round_id>/anchoring.csv", analytics_views.anchoring_csv, name="anchoring_csv"
    ),
    path("api/rounds/<int:round_id>/agreement/", analytics_api.Agreement.as_view(), name="api_agreement"),
    path("api/rounds/<int:round_id>/conflicts/", analytics_api.ConflictList.as_view(), name="api_conflicts"),
    path("api/rounds/<int:round_id>/flows/", analytics_api.Flows.as_view(), name="api_flows"),
    path("api/rounds/<int:round_id>/anchoring/", analytics_api.Anchoring.as_view(), name="api_anchoring"),
]

urlpatterns += [
    path("adjudicate/conventions/", gold_views.conventions, name="conventions"),
    path("adjudicate/conventions/<int:convention_id>/", gold_views.convention_detail, name="convention"),
    path(
        "adjudicate/conventions/<int:convention_id>/vote/",
        gold_views.convention_vote_view,
        name="convention_vote",
    ),
    path(
        "adjudicate/conventions/<int:convention_id>/apply/",
        gold_views.convention_apply_view,
        name="convention_apply",
    ),
    path(
        "adjudicate/conventions/<int:convention_id>/revise/",
        gold_views.convention_revise_view,
        name="convention_revise",
    ),
    path(
        "adjudicate/conventions/<int:convention_id>/withdraw/",
        gold_views.convention_withdraw_view,
        name="convention_withdraw",
    ),
    path("adjudicate/rounds/<int:round_id>/gold/", gold_views.gold_list, name="gold_list"),
    path("adjudicate/rounds/<int:round_id>/gold/open/", gold_views.gold_open, name="gold_open"),
    path(
        "adjudicate/rounds/<int:round_id>/gold/training/",
        gold_views.gold_training_download,
        name="gold_training",
    ),
    path("adjudicate/rounds/<int:round_id>/gold/<int:item_id>/", gold_views.gold_item, name="gold_item"),
    path(
        "adjudicate/rounds/<int:round_id>/gold/<int:item_id>/preview/",
        gold_views.gold_preview_view,
        name="gold_preview",
    ),
]

urlpatterns += [
    path(
        "adjudicate/rounds/<int:round_id>/evaluation/",
        evaluation_views.evaluation_page,
        name="evaluation",
    ),
    path(
        "adjudicate/rounds/<int:round_id>/evaluation/<slug:table>.csv",
        evaluation_views.evaluation_csv,
        name="evaluation_csv",
    ),
    path("api/rounds/<int:round_id>/evaluation/", evaluation_api.Evaluation.as_view(), name="api_evaluation"),
]

# conventions and gold for scripts (adjudication.convention_api, gold_api); the pages above are their
# browser side
urlpatterns += [
    path("api/conventions/", convention_api.ConventionList.as_view(), name="api_conventions"),
    path(
        "api/conventions/<int:convention_id>/",
        convention_api.ConventionDetail.as_view(),
        name="api_convention",
    ),
    path(
        "api/conventions/<int:convention_id>/vote/",
        convention_api.ConventionVote.as_view(),
        name="api_convention_vote",
    ),
    path(
        "api/conventions/<int:convention_id>/apply/",
        convention_api.ConventionApply.as_view(),
        name="api_convention_apply",
    ),
    path(
        "api/conventions/<int:convention_id>/withdraw/",
        convention_api.ConventionWithdraw.as_view(),
        name="api_convention_withdraw",
    ),
    path(
        "api/conventions/<int:convention_id>/revise/",
        convention_api.ConventionRevise.as_view(),
        name="api_convention_revise",
    ),
    path("api/rounds/<int:round_id>/gold/", gold_api.GoldList.as_view(), name="api_gold"),
    path("api/rounds/<int:round_id>/gold/open/", gold_api.GoldOpen.as_view(), name="api_gold_open"),
    path(
        "api/rounds/<int:round_id>/gold/<int:item_id>/", gold_api.GoldDetail.as_view(), name="api_gold_item"
    ),
    path(
        "api/rounds/<int:round_id>/gold/<int:item_id>/preview/",
        gold_api.GoldPreviewView.as_view(),
        name="api_gold_preview",
    ),
    path(
        "api/rounds/<int:round_id>/gold/<int:item_id>/resolve/",
        gold_api.GoldResolve.as_view(),
        name="api_gold_resolve",
    ),
]
