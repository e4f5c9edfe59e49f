from django.urls import path

from annotator import api, manage_views, round_views, user_views, views, workspace_views

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
    path("manage/import/confirm/", manage_views.import_confirm, name="manage_import_confirm"),
    path("manage/item-sets/", manage_views.draw_item_set, name="manage_item_sets"),
    path("manage/rounds/", round_views.rounds, name="manage_rounds"),
    path("manage/rounds/new/", round_views.round_new, name="manage_round_new"),
    path("manage/rounds/<int:round_id>/", round_views.round_detail, name="manage_round"),
    path("manage/rounds/<int:round_id>/pool/add/", round_views.round_pool_add, name="manage_round_pool_add"),
    path(
        "manage/rounds/<int:round_id>/pool/remove/",
        round_views.round_pool_remove,
        name="manage_round_pool_remove",
    ),
    path("manage/users/", user_views.users, name="manage_users"),
    path("manage/users/<int:user_id>/roles/", user_views.user_roles, name="manage_user_roles"),
    path("manage/users/<int:user_id>/active/", user_views.user_active, name="manage_user_active"),
    path("api/items/", api.ItemList.as_view(), name="api_items"),
    path("api/items/<int:pk>/", api.ItemDetail.as_view(), name="api_item"),
    path("api/assignments/", api.MyAssignments.as_view(), name="api_assignments"),
    path("api/assignments/<int:pk>/", api.MyAssignment.as_view(), name="api_assignment"),
    path(
        "api/assignments/<int:pk>/annotation/", api.AnnotationSubmit.as_view(), name="api_annotation_submit"
    ),
    path("api/assignments/<int:pk>/history/", api.AnnotationHistory.as_view(), name="api_annotation_history"),
]
