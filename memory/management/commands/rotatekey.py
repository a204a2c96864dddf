from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory.models import App
from memory.services import Actor
from memory.services.apps import api_key_rotate
from memoryweb.errors import MemorywebError


class Command(BaseCommand):
    help = (
        "Rotate an App's API key: print a new key once; the old keys keep working for the overlap "
        "(MEMORYWEB_API_KEY_OVERLAP seconds unless --overlap is given), then answer 401."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the app")
        parser.add_argument(
            "--overlap",
            type=int,
            default=None,
            metavar="SECONDS",
            help=f"how long the old keys keep working (default {settings.MEMORYWEB_API_KEY_OVERLAP}; 0 revokes them now)",
        )
        parser.add_argument("--key-name", default="", help="a label for the new key")

    def handle(self, name, overlap, key_name, **options):
        app = App.objects.filter(name=name).first()
        if app is None:
            raise CommandError(f"no app named {name!r}")
        if overlap is not None and overlap < 0:
            raise CommandError("--overlap cannot be negative")
        try:
            rotation = api_key_rotate(
                app=app,
                name=key_name,
                overlap=None if overlap is None else timedelta(seconds=overlap),
                actor=Actor.system("rotatekey"),
            )
        except MemorywebError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"app: {app.name}")
        self.stdout.write(f"new api key (shown once, store it now): {rotation.raw_key}")
        if rotation.expiring:
            self.stdout.write(
                f"old keys {', '.join(rotation.expiring)} keep working until "
                f"{rotation.expires_at:%Y-%m-%d %H:%M:%S} UTC, then answer 401"
            )
        if rotation.revoked:
            self.stdout.write(f"old keys {', '.join(rotation.revoked)} revoked now")
        if not rotation.expiring and not rotation.revoked:
            self.stdout.write("the app had no key in use")
