"""Quality checks: the page under rounds/<id>/quality/, the fragment round pages load, and the API
under api/rounds/<id>/quality/ (config/urls.py includes this module with the other apps')."""

from django.urls import path

from quality import api, views

P = "rounds/<id:round_id>/quality/"
A = "api/rounds/<id:round_id>/quality/"

urlpatterns = [
    path(P, views.quality_page, name="quality"),
    path("work/a/<id:assignment_id>/opened/", views.opening, name="quality_opening"),
    path(f"{P}controls/", views.quality_controls, name="quality_controls"),
    path(f"{P}sweep/", views.quality_sweep, name="quality_sweep"),
    path(f"{P}alerts/", views.quality_alerts, name="quality_alerts"),
    path(A, api.QualityDetail.as_view(), name="api_quality"),
    path("api/assignments/<id:pk>/opened/", api.AssignmentOpened.as_view(), name="api_assignment_opened"),
    path(f"{A}controls/", api.QualityControls.as_view(), name="api_quality_controls"),
    path(f"{A}figures/", api.QualityFigures.as_view(), name="api_quality_figures"),
    path(f"{A}sweep/", api.QualitySweep.as_view(), name="api_quality_sweep"),
]
