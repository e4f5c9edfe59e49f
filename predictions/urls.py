from django.urls import path

from predictions import api

urlpatterns = [
    path("api/jobs/prefill/", api.PrefillStart.as_view(), name="api_job_prefill"),
    path("api/jobs/<id:pk>/legality/", api.JobLegality.as_view(), name="api_job_legality"),
]
