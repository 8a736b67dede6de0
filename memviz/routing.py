"""Websocket routes (live pages and the push stream)."""

websocket_urlpatterns: list = []
