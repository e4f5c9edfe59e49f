from django.urls import path

from adjudication import analytics_api, analytics_views

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
    path("api/rounds/<int:round_id>/agreement/", analytics_api.Agreement.as_view(), name="api_agreement"),
    path("api/rounds/<int:round_id>/conflicts/", analytics_api.ConflictList.as_view(), name="api_conflicts"),
    path("api/rounds/<int:round_id>/flows/", analytics_api.Flows.as_view(), name="api_flows"),
    path("api/rounds/<int:round_id>/anchoring/", analytics_api.Anchoring.as_view(), name="api_anchoring"),
]
