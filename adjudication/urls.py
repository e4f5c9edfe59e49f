from django.urls import path

from adjudication import views

urlpatterns = [
    path("", views.rule_set_detail, name="rule_set"),
]
