"""WSGI entry point (plain HTTP only; live pages need the ASGI app)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memviz.settings")
application = get_wsgi_application()
