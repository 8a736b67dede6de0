"""memviz: inspect and curate the memory canvases of LLM agents."""

from memviz.celery import app as celery_app

__all__ = ["celery_app"]
