import os

from channels.routing import ProtocolTypeRouter
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
django_asgi_app = get_asgi_application()

# The embedded default has no separate web server for static files (admin CSS, API docs
# assets); a production deployment may serve STATIC_ROOT from its proxy instead.
application = ProtocolTypeRouter({"http": ASGIStaticFilesHandler(django_asgi_app)})
