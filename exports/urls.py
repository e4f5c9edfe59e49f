from django.urls import path

from exports import api, views

urlpatterns = [
    path("exports/", views.export_list, name="exports"),
    path("exports/raw/", views.export_raw, name="export_raw"),
    path("exports/<int:export_id>/download/", views.export_download, name="export_download"),
    path("api/jobs/export/", api.ExportStart.as_view(), name="api_job_export"),
    path("api/jobs/rawexport/", api.RawExportStart.as_view(), name="api_job_rawexport"),
    path("api/exports/", api.ExportList.as_view(), name="api_exports"),
    path("api/exports/<int:pk>/", api.ExportDetail.as_view(), name="api_export"),
    path("api/exports/<int:pk>/download/", api.ExportDownload.as_view(), name="api_export_download"),
]
