from django.urls import path

from rules import views

urlpatterns = [
    path("", views.rule_set_detail, name="rule_set"),
]
