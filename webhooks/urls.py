"""Webhooks: the pages under webhooks/, the API under api/webhooks/ (config/urls.py includes this
module with the other apps')."""

from django.urls import path

from webhooks import api, views

W = "webhooks/<id:pk>/"
A = "api/webhooks/<id:pk>/"

urlpatterns = [
    path("webhooks/", views.webhooks, name="webhooks"),
    path(W, views.webhook, name="webhook"),
    path(f"{W}deliveries/", views.webhook_deliveries_log, name="webhook_deliveries_log"),
    path(f"{W}ping/", views.webhook_ping_view, name="webhook_ping"),
    path(f"{W}active/", views.webhook_active_view, name="webhook_active"),
    path(f"{W}delete/", views.webhook_delete_view, name="webhook_delete"),
    path(
        f"{W}deliveries/<id:delivery_id>/redeliver/",
        views.delivery_redeliver_view,
        name="delivery_redeliver",
    ),
    path("api/webhooks/", api.WebhookList.as_view(), name="api_webhooks"),
    path(A, api.WebhookDetail.as_view(), name="api_webhook"),
    path(f"{A}ping/", api.WebhookPing.as_view(), name="api_webhook_ping"),
    path(f"{A}deliveries/", api.DeliveryList.as_view(), name="api_webhook_deliveries"),
    path(f"{A}deliveries/<id:delivery_id>/", api.DeliveryDetail.as_view(), name="api_webhook_delivery"),
    path(
        f"{A}deliveries/<id:delivery_id>/redeliver/",
        api.DeliveryRedeliver.as_view(),
        name="api_webhook_redeliver",
    ),
]
