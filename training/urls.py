from django.urls import path

from training import api

urlpatterns = [
    path("api/jobs/train/", api.TrainStart.as_view(), name="api_job_train"),
]
