"""Annotator profiles: the pages under profiles/, the API under api/profiles/ (config/urls.py
includes this module with the other apps')."""

from django.urls import path

from profiles import api, views

urlpatterns = [
    path("profiles/", views.profile_list, name="profiles"),
    path("profiles/me/", views.profile_me, name="profile_me"),
    path("profiles/<str:username>/", views.profile_detail, name="profile"),
    path("profiles/<str:username>/slots.csv", views.profile_csv, name="profile_csv"),
    path("api/profiles/", api.ProfileList.as_view(), name="api_profiles"),
    path("api/profiles/<str:username>/", api.ProfileDetail.as_view(), name="api_profile"),
]
