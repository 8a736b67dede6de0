"""memviz: inspect and curate the memory canvases of LLM agents."""

try:
    from memviz.celery import app as celery_app
except ModuleNotFoundError as exc:  # pragma: no cover - only on an agent's machine
    # `python -m memviz.push` runs where the agent runs, with the standard library alone.
    if exc.name != "celery":
        raise
    celery_app = None

__all__ = ["celery_app"]
