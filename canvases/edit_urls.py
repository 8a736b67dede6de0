"""URLs of canvas curation (edit operations, history, resume), under /a/<agent>/c/<canvas>/."""

from django.urls import path

from canvases import budget_views, edit_views

urlpatterns = [
    path("ops/", edit_views.ops, name="canvas-ops"),
    path("history/", edit_views.history_page, name="canvas-history"),
    path("history/<int:number>/", edit_views.revision_page, name="canvas-revision"),
    path("history/<int:number>/restore/", edit_views.revision_restore, name="canvas-restore"),
    path("resume/", edit_views.resume, name="canvas-resume"),
    path("preview/", edit_views.preview_page, name="canvas-preview"),
    path("budget/", budget_views.budget_page, name="canvas-budget"),
    path("lint/", edit_views.lint_panel, name="canvas-lint"),
    path("live/", edit_views.live_panel, name="canvas-live"),
    path("sync/", edit_views.sync, name="canvas-sync"),
]
