from django.urls import path

from adjudication.gold import api, views

urlpatterns = [
    path("adjudicate/rounds/<id:round_id>/gold/", views.gold_list, name="gold_list"),
    path("adjudicate/rounds/<id:round_id>/gold/open/", views.gold_open, name="gold_open"),
    path(
        "adjudicate/rounds/<id:round_id>/gold/training/",
        views.gold_training_download,
        name="gold_training",
    ),
    path("adjudicate/rounds/<id:round_id>/gold/<id:item_id>/", views.gold_item, name="gold_item"),
    path(
        "adjudicate/rounds/<id:round_id>/gold/<id:item_id>/preview/",
        views.gold_preview_view,
        name="gold_preview",
    ),
    path("api/rounds/<id:round_id>/gold/", api.GoldList.as_view(), name="api_gold"),
    path("api/rounds/<id:round_id>/gold/open/", api.GoldOpen.as_view(), name="api_gold_open"),
    path("api/rounds/<id:round_id>/gold/<id:item_id>/", api.GoldDetail.as_view(), name="api_gold_item"),
    path(
        "api/rounds/<id:round_id>/gold/<id:item_id>/preview/",
        api.GoldPreviewView.as_view(),
        name="api_gold_preview",
    ),
    path(
        "api/rounds/<id:round_id>/gold/<id:item_id>/resolve/",
        api.GoldResolve.as_view(),
        name="api_gold_resolve",
    ),
]
