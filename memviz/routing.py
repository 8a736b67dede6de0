"""Websocket routes (live pages and the push stream)."""

from django.urls import path, re_path

from memviz.consumers import LiveConsumer, StreamConsumer, UnknownSocketConsumer

websocket_urlpatterns: list = [
    path("ws/live/<str:agent>/", LiveConsumer.as_asgi()),
    path("ws/stream/<str:agent>/", StreamConsumer.as_asgi()),
    re_path(r"", UnknownSocketConsumer.as_asgi()),  # last: every other path, closed cleanly
]
