"""`manage.py memory …`: operator commands for the memory store.

manage.py memory reembed [--subject APP/EXTERNAL_ID ...] [--app NAME ...] [--all]
manage.py memory diagnose [--app NAME] [--probe]
"""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from memory.diagnose import diagnose
from memory.models import App, Subject
from memory.services.embeddings import reembed


class ProgressBar:
    """A one-line bar on stderr, redrawn at most every 0.1 s."""

    def __init__(self, stream, width: int = 30):
        self.stream = stream
        self.width = width
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.finished = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.finished or (done < total and now - self.last_draw < 0.1):
            return
        self.last_draw = now
        fraction = done / total if total else 1.0
        filled = int(self.width * fraction)
        rate = done / (now - self.started) if now > self.started else 0.0
        self.stream.write(
            f"\rre-embedding [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
            f"{fraction:4.0%} {rate:.0f} notes/s"
        )
        if done >= total:
            self.finished = True
            self.stream.write("\n")
        self.stream.flush()


class Command(BaseCommand):
    help = "Operator commands for the memory store: reembed, diagnose."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        reembed = sub.add_parser("reembed", help="Backfill note vectors under each app's embedding provider.")
        reembed.add_argument(
            "--subject",
            action="append",
            default=[],
            metavar="APP/EXTERNAL_ID",
            help="A subject (repeatable).",
        )
        reembed.add_argument(
            "--app", action="append", default=[], metavar="NAME", help="An app (repeatable)."
        )
        reembed.add_argument("--all", action="store_true", help="Every subject of every app.")
        reembed.add_argument("--no-progress", action="store_true", help="No progress bar on stderr.")
        diagnose = sub.add_parser("diagnose", help="Embeddings, database and job status as JSON.")
        diagnose.add_argument("--app", metavar="NAME", help="Report this app's configuration and notes.")
        diagnose.add_argument(
            "--probe", action="store_true", help="Embed one text to prove the provider answers."
        )

    def handle(self, *args, **options):
        if options["action"] == "reembed":
            return self.reembed(options)
        return self.diagnose(options)

    def _subjects(self, options) -> list[Subject] | None:
        if options["all"]:
            if options["subject"] or options["app"]:
                raise CommandError("--all cannot be combined with --subject or --app")
            return None
        if not options["subject"] and not options["app"]:
            raise CommandError("name what to re-embed: --subject APP/EXTERNAL_ID, --app NAME or --all")
        subjects: list[Subject] = []
        for name in options["app"]:
            app = App.objects.filter(name=name).first()
            if app is None:
                raise CommandError(f"no app named {name!r}")
            subjects.extend(Subject.objects.filter(app=app))
        for ref in options["subject"]:
            app_name, sep, external_id = ref.partition("/")
            subject = (
                Subject.objects.filter(app__name=app_name, external_id=external_id).first() if sep else None
            )
            if subject is None:
                raise CommandError(f"no subject {ref!r} (write APP/EXTERNAL_ID)")
            subjects.append(subject)
        return subjects

    def reembed(self, options):

        subjects = self._subjects(options)
        progress = None if options["no_progress"] else ProgressBar(self.stderr._out)
        result = reembed(subjects=subjects, progress=progress)
        self.stdout.write(json.dumps(result, indent=2))
        if not result["subjects"]:
            self.stderr.write("no subject has embeddings on: set memory.embeddings.provider")
        if result["errors"]:
            raise CommandError(f"the provider failed: {result['errors'][0]['error']}")

    def diagnose(self, options):

        app = None
        if options.get("app"):
            app = App.objects.filter(name=options["app"]).first()
            if app is None:
                raise CommandError(f"no app named {options['app']!r}")
        self.stdout.write(json.dumps(diagnose(app, probe=options["probe"]), indent=2, default=str))
