"""ASGI entry point: HTTP through Django, websockets through Channels (same origin incl. port, auth)."""

import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memviz.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from memviz.routing import websocket_urlpatterns  # noqa: E402
from memviz.ws_origin import SameOriginValidator  # noqa: E402

if "daphne.server" in sys.modules:  # served by daphne: refuse bodies before they are stored
    from memviz.daphne_gate import install

    install()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
