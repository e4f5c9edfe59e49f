from django.urls import path

from adjudication.agreement import api, views

urlpatterns = [
    path("adjudicate/", views.rounds, name="adjudicate"),
    path("adjudicate/rounds/<id:round_id>/", views.dashboard, name="agreement"),
    path("adjudicate/rounds/<id:round_id>/conflicts/", views.conflict_list, name="conflicts"),
    path(
        "adjudicate/rounds/<id:round_id>/items/<id:item_id>/",
        views.item_view,
        name="conflict_item",
    ),
    path("adjudicate/rounds/<id:round_id>/flows/", views.flow_table, name="flows"),
    path("adjudicate/rounds/<id:round_id>/anchoring/", views.anchoring_table, name="anchoring"),
    path("adjudicate/rounds/<id:round_id>/agreement.csv", views.agreement_csv, name="agreement_csv"),
    path("adjudicate/rounds/<id:round_id>/conflicts.csv", views.conflicts_csv, name="conflicts_csv"),
    path("adjudicate/rounds/<id:round_id>/flows.csv", views.flows_csv, name="flows_csv"),
    path("adjudicate/rounds/<id:round_id>/passes.csv", views.passes_csv, name="passes_csv"),
    path("adjudicate/rounds/<id:round_id>/anchoring.csv", views.anchoring_csv, name="anchoring_csv"),
    path("api/rounds/<id:round_id>/agreement/", api.Agreement.as_view(), name="api_agreement"),
    path("api/rounds/<id:round_id>/conflicts/", api.ConflictList.as_view(), name="api_conflicts"),
    path("api/rounds/<id:round_id>/flows/", api.Flows.as_view(), name="api_flows"),
    path("api/rounds/<id:round_id>/anchoring/", api.Anchoring.as_view(), name="api_anchoring"),
]
