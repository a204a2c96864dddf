"""`manage.py memory …`: operator commands for the memory store and its session summaries.

manage.py memory reembed [--subject APP/EXTERNAL_ID ...] [--app NAME ...] [--all]
manage.py memory diagnose [--app NAME [--subject ID]] [--probe]
manage.py memory view|stats|clear|reset|enqueue|rebuild --app NAME --subject ID
manage.py memory mm list|show|refresh|history|seed|delete|reload --app NAME --subject ID [NAME] [--all]

The session-summary commands mirror the `/memory` slash commands of a chat app (their REST
twins are under /api/v1/subjects/<id>/memory/, chat/memory_api.py).
"""

import json
import sys
import time

from django.core.management.base import BaseCommand, CommandError

from chat.summaries.mental_models import (
    mental_model_get,
    mental_model_refresh,
    mental_models_list,
    mental_models_refresh,
    mental_models_seed,
)
from chat.summaries.pipeline import summaries_request, summaries_run
from chat.summaries.status import summaries_diagnose, summaries_stats
from memory.config import get_config
from memory.context import context_build
from memory.diagnose import diagnose
from memory.documents import document_versions, version_diff
from memory.models import App, Conversation, Subject
from memory.selectors import conversation_get
from memory.services.audit import Actor
from memory.services.documents import conversation_memory_reload, document_delete, summaries_clear
from memory.services.embeddings import reembed
from memoryweb.errors import MemorywebError

ACTOR = Actor.system("manage.py memory")


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
    help = (
        "Operator commands for the memory store: reembed, diagnose; the session summaries of a "
        "subject: view, stats, clear, reset, enqueue, rebuild; its mental models: mm …"
    )
    stealth_options = ("stdin",)  # the confirmation prompt reads it (tests pass a terminal)

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
            "--subject", metavar="EXTERNAL_ID", help="Add the subject's session-summary pipeline status."
        )
        diagnose.add_argument(
            "--probe", action="store_true", help="Embed one text to prove the provider answers."
        )

        def subject_parser(parent, name, help_text):
            parser = parent.add_parser(name, help=help_text)
            parser.add_argument("--app", required=True, metavar="NAME")
            parser.add_argument("--subject", required=True, metavar="EXTERNAL_ID")
            return parser

        view = subject_parser(
            sub, "view", "Print exactly what the model gets: the stable prefix, then the tail."
        )
        view.add_argument("--message", default="", help="The user's message the context is built for.")
        view.add_argument("--conversation", type=int, metavar="ID", help="Build it as in this conversation.")
        view.add_argument("--json", action="store_true", help="The whole context as the API returns it.")
        subject_parser(sub, "stats", "Extractions, documents by kind, versions, tokens, the last run (JSON).")
        for name, what in (
            ("clear", "Delete the subject's extractions and documents, mental models kept."),
            ("reset", "Delete the subject's extractions and every document, mental models too."),
        ):
            subject_parser(sub, name, what).add_argument("--yes", action="store_true", help="Do not ask.")
        subject_parser(sub, "enqueue", "Queue a session-summary run of the subject (the worker runs it).")
        subject_parser(sub, "rebuild", "Re-extract every conversation and recompose now; print the run.")

        mm = sub.add_parser("mm", help="Mental models.").add_subparsers(dest="mm_action", required=True)
        subject_parser(mm, "list", "The subject's mental models.")
        subject_parser(mm, "seed", "Create the built-in mental models the subject lacks.")
        for name, what in (
            ("show", "A model's current content."),
            ("history", "A model's versions, each with its diff."),
        ):
            subject_parser(mm, name, what).add_argument("name", metavar="NAME")
        refresh = subject_parser(mm, "refresh", "Refresh one model, or with --all every auto-refresh one.")
        refresh.add_argument("name", nargs="?", metavar="NAME")
        refresh.add_argument("--all", action="store_true", help="Every auto-refresh model.")
        delete = subject_parser(mm, "delete", "Delete a model and its history.")
        delete.add_argument("name", metavar="NAME")
        delete.add_argument("--yes", action="store_true", help="Do not ask.")
        reload = subject_parser(
            mm, "reload", "Send the summary and mental models again in the next context of a conversation."
        )
        reload.add_argument(
            "--conversation", type=int, metavar="ID", help="Only this one (else all of them)."
        )

    def handle(self, *args, **options):
        action = options["action"]
        if action == "reembed":
            return self.reembed(options)
        if action == "diagnose":
            return self.diagnose(options)
        try:
            subject = self._subject(options)
            if action == "mm":
                return getattr(self, f"mm_{options['mm_action']}")(subject, options)
            return getattr(self, action)(subject, options)
        except MemorywebError as exc:
            raise CommandError(exc.message) from exc

    def _app(self, name: str) -> App:
        app = App.objects.filter(name=name).first()
        if app is None:
            raise CommandError(f"no app named {name!r}")
        return app

    def _subject(self, options) -> Subject:
        app = self._app(options["app"])
        subject = Subject.objects.filter(app=app, external_id=options["subject"]).first()
        if subject is None:
            raise CommandError(f"no subject {options['subject']!r} in app {app.name!r}")
        return subject

    def _json(self, value) -> None:
        self.stdout.write(json.dumps(value, indent=2, default=str))

    def _confirm(self, options, question: str) -> None:
        """Ask `question` on a terminal; without one (and without --yes) refuse."""
        if options.get("yes"):
            return
        stdin = options.get("stdin") or sys.stdin
        if not stdin.isatty():
            raise CommandError("refusing without a terminal to confirm on: pass --yes")
        self.stdout.write(f"{question} [y/N] ", ending="")
        self.stdout.flush()
        if stdin.readline().strip().lower() not in ("y", "yes"):
            raise CommandError("cancelled")

    # --- the session summaries of one subject -------------------------------------------------

    def view(self, subject, options):
        conversation = None
        if options.get("conversation") is not None:
            conversation = conversation_get(
                app=subject.app, conversation_id=options["conversation"], subject=subject
            )
        context = context_build(
            subject=subject,
            message=options["message"],
            config=get_config(subject.app),
            conversation=conversation,
            record=False,
        ).as_dict()
        if options["json"]:
            return self._json(context)
        tokens = context["tokens"]
        self.stdout.write(f"=== stable prefix ({tokens.get('stable_prefix', 0)} tokens) ===")
        self.stdout.write(context["stable_prefix"])
        self.stdout.write(f"=== tail ({tokens.get('total', 0) - tokens.get('stable_prefix', 0)} tokens) ===")
        self.stdout.write(context["tail"])

    def stats(self, subject, options):
        self._json(summaries_stats(subject=subject))

    def clear(self, subject, options):
        self._confirm(options, f"Delete the extractions and documents of {subject} (mental models kept)?")
        self._json(summaries_clear(subject=subject, actor=ACTOR))

    def reset(self, subject, options):
        self._confirm(options, f"Delete the extractions, documents and mental models of {subject}?")
        self._json(summaries_clear(subject=subject, actor=ACTOR, mental_models=True))

    def enqueue(self, subject, options):
        run = summaries_request(subject=subject, actor=ACTOR)
        self._json({"job_run": run.pk, "status": run.status})

    def rebuild(self, subject, options):
        run = summaries_run(subject=subject, actor=ACTOR, force=True)
        if run is None:
            raise CommandError("another run of this subject holds its lease: try again when it is done")
        self._json({"job_run": run.pk, "status": run.status, "error": run.error, "stats": run.stats})
        if run.error:
            raise CommandError(f"the run failed: {run.error}")

    # --- mental models --------------------------------------------------------------------

    def mm_list(self, subject, options):
        documents = mental_models_list(subject=subject)
        if not documents:
            self.stdout.write("no mental models (manage.py memory mm seed adds the built-in ones)")
        for d in documents:
            flags = ",".join(f for f, on in (("auto", d.auto_refresh), ("builtin", d.builtin)) if on) or "-"
            self.stdout.write(f"{d.name}\tv{d.current.number}\t{flags}\t{d.description}")

    def mm_show(self, subject, options):
        document = mental_model_get(subject=subject, name=options["name"])
        version = document.current
        self.stdout.write(
            f"# {document.url} v{version.number} ({version.method or 'manual'}, {version.created_at:%Y-%m-%d %H:%M})"
        )
        self.stdout.write(f"# {document.description}")
        self.stdout.write(version.content)

    def mm_refresh(self, subject, options):
        if options["all"] == bool(options["name"]):
            raise CommandError("name one model, or pass --all for every auto-refresh one")
        if options["all"]:
            return self._json(mental_models_refresh(subject=subject, actor=ACTOR))
        document = mental_model_get(subject=subject, name=options["name"])
        version = mental_model_refresh(document=document, actor=ACTOR)
        if version is None:
            self.stdout.write(f"{document.name}: unchanged (v{document.current.number})")
        else:
            self.stdout.write(f"{document.name}: v{version.number}")

    def mm_history(self, subject, options):
        document = mental_model_get(subject=subject, name=options["name"])
        previous = None
        for version in document_versions(document=document):
            self.stdout.write(f"## v{version.number} {version.created_at:%Y-%m-%d %H:%M} {version.method}")
            self.stdout.write(version_diff(previous, version, url=document.url))
            previous = version

    def mm_seed(self, subject, options):
        created = mental_models_seed(subject=subject, actor=ACTOR)
        names = ", ".join(d.name for d in created)
        self.stdout.write(
            f"created {len(created)}: {names}" if created else "every built-in model exists already"
        )

    def mm_delete(self, subject, options):
        document = mental_model_get(subject=subject, name=options["name"])
        self._confirm(options, f"Delete the mental model {document.name} and its history?")
        document_delete(document=document, actor=ACTOR)
        self.stdout.write(f"deleted {document.name}")

    def mm_reload(self, subject, options):
        if options.get("conversation") is not None:
            conversations = [
                conversation_get(app=subject.app, conversation_id=options["conversation"], subject=subject)
            ]
        else:
            conversations = list(Conversation.objects.filter(subject=subject).order_by("pk"))
        for conversation in conversations:
            version = conversation_memory_reload(conversation=conversation, actor=ACTOR)
            pinned = f"summary v{version.number}" if version else "no summary yet"
            self.stdout.write(f"conversation {conversation.pk}: reloaded ({pinned})")
        if not conversations:
            self.stdout.write("the subject has no conversations")

    # --- the store ------------------------------------------------------------------------

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
        app = self._app(options["app"]) if options.get("app") else None
        report = diagnose(app, probe=options["probe"])
        if options.get("subject"):
            if app is None:
                raise CommandError("--subject needs --app")
            report["summaries"] = summaries_diagnose(subject=self._subject(options))
        self._json(report)
