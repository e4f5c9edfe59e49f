from django.urls import path

from annotator import views

urlpatterns = [
    path("", views.home, name="home"),
    path("explain/", views.explain, name="explain"),
]
