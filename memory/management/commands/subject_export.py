"""manage.py subject_export --app NAME --subject ID [-o FILE]: the subject's export v1 document
(docs/export.md), the same as GET /api/v1/subjects/{subject} answers, to FILE or stdout."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory.models import App, Subject
from memory.selectors import subject_export


def subject_named(app_name: str, external_id: str) -> Subject:
    app = App.objects.filter(name=app_name).first()
    if app is None:
        raise CommandError(f"no app named {app_name!r}")
    subject = Subject.objects.filter(app=app, external_id=external_id).first()
    if subject is None:
        raise CommandError(f"no subject {external_id!r} in app {app_name!r}")
    return subject


class Command(BaseCommand):
    help = "Write a subject's export (the v1 JSON document of docs/export.md) to a file or stdout."

    def add_arguments(self, parser):
        parser.add_argument("--app", required=True, metavar="NAME")
        parser.add_argument("--subject", required=True, metavar="ID", help="the subject's external id")
        parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")

    def handle(self, **options):
        document = subject_export(subject=subject_named(options["app"], options["subject"]))
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stderr.write(f"exported {options['subject']!r} to {options['output']}")
        else:
            self.stdout.write(text, ending="")
