from django.urls import path

from annotator import api, manage_views, views, workspace_views

urlpatterns = [
    path("", views.home, name="home"),
    path("explain/", views.explain, name="explain"),
    path("guidelines/", views.guidelines, name="guidelines"),
    path("work/", workspace_views.queue, name="queue"),
    path("work/round/<int:round_id>/next/", workspace_views.round_next, name="round_next"),
    path("work/round/<int:round_id>/items/", workspace_views.round_items, name="round_items"),
    path("work/a/<int:assignment_id>/", workspace_views.annotate, name="annotate"),
    path("work/a/<int:assignment_id>/preview/", workspace_views.preview, name="preview"),
    path("work/a/<int:assignment_id>/skip/", workspace_views.skip, name="skip"),
    path("work/a/<int:assignment_id>/history/", workspace_views.history, name="history"),
    path("manage/import/", manage_views.import_items, name="manage_import"),
    path("manage/item-sets/", manage_views.draw_item_set, name="manage_item_sets"),
    path("api/items/", api.ItemList.as_view(), name="api_items"),
    path("api/items/<int:pk>/", api.ItemDetail.as_view(), name="api_item"),
    path("api/assignments/", api.MyAssignments.as_view(), name="api_assignments"),
    path("api/assignments/<int:pk>/", api.MyAssignment.as_view(), name="api_assignment"),
    path(
        "api/assignments/<int:pk>/annotation/", api.AnnotationSubmit.as_view(), name="api_annotation_submit"
    ),
    path("api/assignments/<int:pk>/history/", api.AnnotationHistory.as_view(), name="api_annotation_history"),
]
