from django.urls import path

from jobs import api, views

urlpatterns = [
    path("jobs/", views.job_list, name="jobs"),
    path("jobs/start/<slug:kind>/", views.job_start, name="job_start"),
    path("jobs/<id:job_id>/", views.job_detail, name="job_detail"),
    path("jobs/<id:job_id>/status/", views.job_status, name="job_status"),
    path("jobs/<id:job_id>/cancel/", views.job_cancel_view, name="job_cancel"),
    path("jobs/<id:job_id>/resume/", views.job_resume_view, name="job_resume"),
    path("api/jobs/", api.JobList.as_view(), name="api_jobs"),
    path("api/jobs/<id:pk>/", api.JobDetail.as_view(), name="api_job"),
    path("api/jobs/<id:pk>/cancel/", api.JobCancel.as_view(), name="api_job_cancel"),
    path("api/jobs/<id:pk>/resume/", api.JobResume.as_view(), name="api_job_resume"),
]
