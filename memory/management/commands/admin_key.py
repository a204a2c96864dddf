from django.core.management.base import BaseCommand, CommandError

from memory.models import AdminKey
from memory.services import Actor
from memory.services.admin_keys import admin_key_create, admin_key_revoke
from memoryweb.errors import MemorywebError


class Command(BaseCommand):
    help = "Mint an admin key for /api/v1/admin/ (printed once) or revoke one by its prefix."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="mint a key and print it once")
        create.add_argument("name", help="a label for the key")
        revoke = sub.add_parser("revoke", help="revoke a key")
        revoke.add_argument("prefix", help="the key's prefix (mwa_<prefix>_…)")

    def handle(self, action, **options):
        actor = Actor.system("admin_key")
        if action == "create":
            try:
                key, raw_key = admin_key_create(name=options["name"], actor=actor)
            except MemorywebError as exc:
                raise CommandError(exc.message) from exc
            self.stdout.write(f"admin key {key.prefix} created; it is shown once:\n{raw_key}")
            return
        key = AdminKey.objects.filter(prefix=options["prefix"]).first()
        if key is None:
            raise CommandError(f"no admin key with prefix {options['prefix']!r}")
        admin_key_revoke(key=key, actor=actor)
        self.stdout.write(f"admin key {key.prefix} revoked")
