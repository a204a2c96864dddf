from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory.models import App
from memory.services import Actor, api_key_create, app_create
from memoryweb.errors import MemorywebError


class Command(BaseCommand):
    help = "Create an App (or add a key to an existing one with --key-only) and print its API key once."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--key-only", action="store_true", help="add a new key to an existing app")
        parser.add_argument("--key-name", default="", help="a label for the key")
        parser.add_argument(
            "--rate-limit",
            default="",
            help='requests the key may make, e.g. "600/minute" or "off" (default MEMORYWEB_API_RATE_LIMIT)',
        )

    def handle(self, name, key_only, key_name, rate_limit, **options):
        actor = Actor.system("createapp")
        try:
            with transaction.atomic():  # a refused key leaves no app behind
                if key_only:
                    app = App.objects.filter(name=name).first()
                    if app is None:
                        raise CommandError(f"no app named {name!r}")
                else:
                    app = app_create(name=name, actor=actor)
                _, raw_key = api_key_create(app=app, name=key_name, rate_limit=rate_limit, actor=actor)
        except MemorywebError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"app: {app.name}")
        self.stdout.write(f"api key (shown once, store it now): {raw_key}")
