"""The reviews app: it reads sessions and canvases; neither of them imports it (one-way)."""

from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    default_auto_field = "django.db.models.BigAutoField"
