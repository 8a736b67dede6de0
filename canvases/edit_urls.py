"""URLs of canvas curation (edit operations, history, resume), under /a/<agent>/c/<canvas>/."""

urlpatterns: list = []
