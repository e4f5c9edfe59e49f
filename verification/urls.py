from django.urls import path

from verification import api, calibration_views

urlpatterns = [
    path("adjudicate/rounds/<id:round_id>/judgements/", calibration_views.judgements, name="judgements"),
    path(
        "adjudicate/rounds/<id:round_id>/judgements/<id:item_id>/",
        calibration_views.judgement_mark_view,
        name="judgement_mark",
    ),
    path(
        "adjudicate/rounds/<id:round_id>/calibration/",
        calibration_views.calibration_page,
        name="calibration",
    ),
    path("api/rounds/<id:round_id>/calibration/", api.Calibration.as_view(), name="api_calibration"),
    path("api/jobs/verify/", api.VerifyStart.as_view(), name="api_job_verify"),
]
