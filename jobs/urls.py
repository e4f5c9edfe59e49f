from django.urls import path

from jobs import api, views

urlpatterns = [
    path("jobs/", views.job_list, name="jobs"),
    path("jobs/verify/", views.job_verify, name="job_verify"),
    path("jobs/train/", views.job_train, name="job_train"),
    path("jobs/<int:job_id>/", views.job_detail, name="job_detail"),
    path("jobs/<int:job_id>/status/", views.job_status, name="job_status"),
    path("jobs/<int:job_id>/cancel/", views.job_cancel_view, name="job_cancel"),
    path("jobs/<int:job_id>/resume/", views.job_resume_view, name="job_resume"),
    path("exports/", views.export_list, name="exports"),
    path("exports/raw/", views.export_raw, name="export_raw"),
    path("exports/<int:export_id>/download/", views.export_download, name="export_download"),
    path("api/jobs/", api.JobList.as_view(), name="api_jobs"),
    path("api/jobs/prefill/", api.PrefillStart.as_view(), name="api_job_prefill"),
    path("api/jobs/verify/", api.VerifyStart.as_view(), name="api_job_verify"),
    path("api/jobs/export/", api.ExportStart.as_view(), name="api_job_export"),
    path("api/jobs/train/", api.TrainStart.as_view(), name="api_job_train"),
    path("api/jobs/rawexport/", api.RawExportStart.as_view(), name="api_job_rawexport"),
    path("api/jobs/<int:pk>/", api.JobDetail.as_view(), name="api_job"),
    path("api/jobs/<int:pk>/cancel/", api.JobCancel.as_view(), name="api_job_cancel"),
    path("api/jobs/<int:pk>/resume/", api.JobResume.as_view(), name="api_job_resume"),
    path("api/jobs/<int:pk>/legality/", api.JobLegality.as_view(), name="api_job_legality"),
    path("api/exports/", api.ExportList.as_view(), name="api_exports"),
    path("api/exports/<int:pk>/", api.ExportDetail.as_view(), name="api_export"),
    path("api/exports/<int:pk>/download/", api.ExportDownload.as_view(), name="api_export_download"),
]
