// Generated from canvases/mermaid/vocabulary.py by scripts/export_statuses.py: do not edit.
export const statuses = Object.freeze({"vocabulary": ["done", "doing", "todo", "paused", "blocked"], "urgency": ["blocked", "doing", "paused", "todo", "done", "other", "none"], "active": ["doing", "blocked"]});
