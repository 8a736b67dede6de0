"""Review notes, marks and queue, under /a/<agent>/review/."""

from django.urls import path

from reviews import views

urlpatterns = [
    path("", views.review_page, name="agent-review"),
    path("thread/", views.thread_view, name="review-thread"),
    path("note/", views.note_view, name="review-note"),
    path("mark/", views.mark_view, name="review-mark"),
    path("queue/", views.queue_view, name="review-queue"),
    path("notes/<int:note>/promote/", views.promote_view, name="review-promote"),
]
