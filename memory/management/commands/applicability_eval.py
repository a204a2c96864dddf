"""`manage.py applicability_eval [--data PATH] [--verbose] [--json OUT]`: the pass rate of the
context builder on the labelled applicability set (tests/data/applicability/labelled.json),
overall and per category; memory/applicability_eval.py says how a question passes and
docs/applicability-set.md what the set covers.

It loads every persona into a new App (named applicability-eval-<time>, every model component
"none": the heuristic path) and builds one context per question. Like `manage.py bench` and
`summaries_eval`, it writes to the configured database: run it against a scratch one
(`MEMORYWEB_VAR_DIR=$(mktemp -d)`, then `manage.py migrate`). The App stays, so a failing
question's context can be previewed in the dashboard afterwards."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory.applicability_eval import DEFAULT_DATA, format_failures, format_table, load_set, measure


class Command(BaseCommand):
    help = "Pass rate of the context builder on the labelled applicability set, per category."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="labelled set (JSON)")
        parser.add_argument(
            "--verbose", action="store_true", help="list every failing question and why it failed"
        )
        parser.add_argument(
            "--json", dest="json_out", type=Path, metavar="OUT", help="also write the results to this file"
        )

    def handle(self, *args, data: Path, verbose: bool, json_out: Path | None, **options):
        if not data.exists():
            raise CommandError(f"no labelled set at {data}")
        try:
            labelled = load_set(data)
        except ValueError as exc:
            raise CommandError(f"{data}: not JSON ({exc})") from exc
        try:
            report = measure(labelled)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        report.data = data.name
        self.stdout.write(f"app {report.app}\n")
        self.stdout.write(format_table(report, f"applicability · heuristic · {data.name}"))
        if verbose:
            self.stdout.write(format_failures(report))
        if json_out:
            json_out.write_text(json.dumps(report.as_dict(), indent=1, ensure_ascii=False) + "\n")
            self.stdout.write(f"wrote {json_out}\n")
