"""The project's own Python packages, for the tests that read its code (import floors, the one
file opener, restated rules). A new app is added here once."""

APP_PACKAGES = ("agentfs", "memviz", "sessions", "canvases", "intake", "debugging", "reviews", "browse")
