"""The learning queue: the pages under adjudicate/rounds/<id>/queue/, the API under
api/rounds/<id>/queue/ (config/urls.py includes this module with the other apps')."""

from django.urls import path

from learning import api, views

P = "adjudicate/rounds/<id:round_id>/queue/"
A = "api/rounds/<id:round_id>/queue/"

urlpatterns = [
    path(P, views.queue_page, name="learning_queue"),
    path(f"{P}recompute/", views.queue_recompute, name="learning_recompute"),
    path(f"{P}retrain/", views.queue_retrain, name="learning_retrain"),
    path(f"{P}simulate/", views.queue_simulate, name="learning_simulate"),
    path(f"{P}off/", views.queue_off, name="learning_off"),
    path("adjudicate/rounds/<id:round_id>/queue.csv", views.queue_csv, name="learning_queue_csv"),
    path(A, api.QueueDetail.as_view(), name="api_learning_queue"),
    path(f"{A}recompute/", api.QueueRecompute.as_view(), name="api_learning_recompute"),
    path(f"{A}retrain/", api.QueueRetrain.as_view(), name="api_learning_retrain"),
    path(f"{A}simulate/", api.QueueSimulate.as_view(), name="api_learning_simulate"),
]
