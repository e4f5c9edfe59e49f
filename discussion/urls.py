"""The discussion: an item's threads in a round and their comments (pages and API), the
notifications (pages and API). config/urls.py includes this module with the other apps'."""

from django.urls import path

from discussion import api, views

T = "discussion/items/<id:item_id>/rounds/<id:round_id>/"

urlpatterns = [
    path(T, views.thread, name="discussion_thread"),
    path(f"{T}comments/", views.comment_create, name="discussion_post"),
    path(f"{T}comments/<id:comment_id>/edit/", views.comment_update, name="discussion_edit"),
    path("notifications/", views.notifications, name="notifications"),
    path("notifications/badge/", views.badge, name="notification_badge"),
    path("notifications/read/", views.notifications_mark_read, name="notifications_read"),
    path("notifications/<id:pk>/open/", views.notification_open, name="notification_open"),
    path("api/items/<id:pk>/comments/", api.CommentList.as_view(), name="api_item_comments"),
    path("api/comments/<id:pk>/", api.CommentDetail.as_view(), name="api_comment"),
    path("api/notifications/", api.NotificationList.as_view(), name="api_notifications"),
    path("api/notifications/read/", api.NotificationsReadAll.as_view(), name="api_notifications_read"),
    path("api/notifications/<id:pk>/read/", api.NotificationRead.as_view(), name="api_notification_read"),
]
