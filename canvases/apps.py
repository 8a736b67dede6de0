"""The canvases app: task canvases (.mmd), their nodes and edit history."""

from django.apps import AppConfig


class CanvasesConfig(AppConfig):
    name = "canvases"
    default_auto_field = "django.db.models.BigAutoField"
