"""manage.py subject_import --app NAME --subject ID FILE: load an export v1 document
(docs/export.md) as the App's subject ID, through the same service as POST
/api/v1/subjects/{subject}/import: all or nothing, refused when the subject holds memory."""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory.config import get_config
from memory.models import App
from memory.services import Actor
from memory.services.portable import subject_import
from memoryweb.errors import MemorywebError


class Command(BaseCommand):
    help = "Import a subject's export (the v1 JSON document of docs/export.md) into an App."

    def add_arguments(self, parser):
        parser.add_argument("--app", required=True, metavar="NAME")
        parser.add_argument("--subject", required=True, metavar="ID", help="the external id to import as")
        parser.add_argument("file", metavar="FILE", help="the export document ('-' for stdin)")

    def handle(self, **options):
        app = App.objects.filter(name=options["app"]).first()
        if app is None:
            raise CommandError(f"no app named {options['app']!r}")
        path = options["file"]
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
            document = json.loads(text)
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"cannot read an export document from {path}: {exc}") from exc
        try:
            counts = subject_import(
                app=app,
                external_id=options["subject"],
                document=document,
                actor=Actor.system("subject_import"),
                config=get_config(app),
            )
        except MemorywebError as exc:
            raise CommandError(f"{exc.field}: {exc.message}" if exc.field else exc.message) from exc
        self.stdout.write(json.dumps({"subject": options["subject"], "counts": counts}, indent=2))
