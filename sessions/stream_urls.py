"""URLs of the pushed memory stream (/api/stream/<agent>/)."""

urlpatterns: list = []
