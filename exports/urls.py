from django.urls import path

from exports import api, hf_api, hf_views, replay_api, replay_views, views

urlpatterns = [
    path("exports/", views.export_list, name="exports"),
    path("exports/raw/", views.export_raw, name="export_raw"),
    path("exports/<id:export_id>/download/", views.export_download, name="export_download"),
    path("exports/<id:export_id>/", replay_views.export_detail, name="export_detail"),
    path("exports/<id:export_id>/replay/", replay_views.export_replay, name="export_replay"),
    path("exports/<id:export_id>/hf.zip", hf_views.export_hf_download, name="export_hf_download"),
    path("api/jobs/export/", api.ExportStart.as_view(), name="api_job_export"),
    path("api/jobs/rawexport/", api.RawExportStart.as_view(), name="api_job_rawexport"),
    path("api/exports/", api.ExportList.as_view(), name="api_exports"),
    path("api/exports/<id:pk>/", api.ExportDetail.as_view(), name="api_export"),
    path("api/exports/<id:pk>/download/", api.ExportDownload.as_view(), name="api_export_download"),
    path("api/exports/replay/", replay_api.ReplayUpload.as_view(), name="api_export_replay_upload"),
    path("api/exports/<id:pk>/replay/", replay_api.ExportReplay.as_view(), name="api_export_replay"),
    path("api/exports/<id:pk>/hf.zip", hf_api.ExportHfDownload.as_view(), name="api_export_hf"),
]
