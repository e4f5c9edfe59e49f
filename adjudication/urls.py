"""The adjudication app's URLs: each feature's own, beside its views and API."""

from django.urls import include, path

urlpatterns = [
    path("", include("adjudication.agreement.urls")),
    path("", include("adjudication.conventions.urls")),
    path("", include("adjudication.gold.urls")),
    path("", include("adjudication.evaluation.urls")),
]
