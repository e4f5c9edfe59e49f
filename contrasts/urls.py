"""Minimal pairs: the pages under contrasts/, the API under api/contrasts/ (config/urls.py
includes this module with the other apps')."""

from django.urls import path

from contrasts import api, views

S = "contrasts/<id:pk>/"
A = "api/contrasts/<id:set_id>/"

urlpatterns = [
    path("contrasts/", views.contrast_sets, name="contrasts"),
    path(S, views.contrast_set, name="contrast_set"),
    path(f"{S}pairs/", views.contrast_pair_add, name="contrast_pair_add"),
    path(f"{S}freeze/", views.contrast_set_freeze, name="contrast_set_freeze"),
    path(f"{S}new-version/", views.contrast_set_new_version, name="contrast_set_new_version"),
    path(f"{S}scores/", views.contrast_scores, name="contrast_scores"),
    path(f"{S}split.jsonl", views.contrast_split, name="contrast_split"),
    path("api/contrasts/", api.PairSetList.as_view(), name="api_contrasts"),
    path(A, api.PairSetDetail.as_view(), name="api_contrast_set"),
    path(f"{A}freeze/", api.PairSetFreeze.as_view(), name="api_contrast_freeze"),
    path(f"{A}new-version/", api.PairSetNewVersion.as_view(), name="api_contrast_new_version"),
    path(f"{A}pairs/", api.PairList.as_view(), name="api_contrast_pairs"),
    path(f"{A}scores/", api.PairSetScores.as_view(), name="api_contrast_scores"),
]
