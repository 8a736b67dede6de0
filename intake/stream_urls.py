"""URLs of the pushed memory stream (/api/stream/<agent>/)."""

from django.urls import path

from intake.stream_views import stream_push

urlpatterns: list = [path("<str:agent>/", stream_push, name="stream_push")]
