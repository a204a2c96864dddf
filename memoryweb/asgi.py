import os

from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
django_asgi_app = get_asgi_application()

from memoryweb.routing import websocket_urlpatterns  # noqa: E402  (needs the apps loaded above)

# The embedded default has no separate web server for static files (admin CSS, API docs
# assets); a production deployment may serve STATIC_ROOT from its proxy instead.
# Websockets (live updates, the playground) use the dashboard session; a socket opened from
# another site is refused by the origin check, which is CSRF's counterpart for websockets.
application = ProtocolTypeRouter(
    {
        "http": ASGIStaticFilesHandler(django_asgi_app),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
