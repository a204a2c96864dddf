from django.conf import settings
from django.core.management.base import BaseCommand

from memory.models import ApiKey, App
from memory.services import Actor, api_key_create, app_create

DEMO_APP = "demo"


class Command(BaseCommand):
    help = "Create the local demo app and an API key, saved under var/ (idempotent)."

    def handle(self, **options):
        key_file = settings.VAR_DIR / "demo-api-key.txt"
        actor = Actor.system("bootstrap_demo")
        app = App.objects.filter(name=DEMO_APP).first() or app_create(name=DEMO_APP, actor=actor)
        if key_file.exists():
            raw_key = key_file.read_text().strip()
            prefix = raw_key.split("_")[1] if raw_key.count("_") == 2 else ""
            key = ApiKey.objects.filter(app=app, prefix=prefix, revoked_at=None).first()
            if key is not None and key.key_hash == ApiKey.hash_secret(raw_key):
                self.stdout.write(f"demo app ready; API key in {key_file}")
                return
        _, raw_key = api_key_create(app=app, name="demo", actor=actor)
        key_file.write_text(raw_key + "\n")
        key_file.chmod(0o600)
        self.stdout.write(f"demo app ready; new API key (saved to {key_file}):\n  {raw_key}")
