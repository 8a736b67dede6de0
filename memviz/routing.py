"""Websocket routes (live pages and the push stream)."""

from django.urls import path

from memviz.consumers import LiveConsumer, StreamConsumer

websocket_urlpatterns: list = [
    path("ws/live/<str:agent>/", LiveConsumer.as_asgi()),
    path("ws/stream/<str:agent>/", StreamConsumer.as_asgi()),
]
