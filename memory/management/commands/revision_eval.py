"""`manage.py revision_eval [--split dev|test|dev2|dev3|heldout2|all] [--json [OUT]] [--show-misses] [--llm] [--keep]`:
how often conflicting statements become the right belief revision on the labelled set
(tests/data/revisions/), per action (precision, recall, F1), the accuracy, the confusion and
whether the history stayed intact; memory/beliefs/evaluation/ says how a case runs and
docs/revision-set.md what the set holds.

Every case runs in its own subject inside a transaction that is rolled back, so nothing stays
in the database (unless `--keep`: then the App `revision-eval-<time>` and its subjects remain,
to look at in the dashboard — use a scratch database). The rules decide by default (every
model component "none"); `--llm` leaves the deployment's configuration, so `llm.revision`
decides where it is set."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory.beliefs.evaluation import SPLITS, format_misses, format_table, load_cases, measure


class Command(BaseCommand):
    help = "Per-action precision and recall of belief revision on the labelled revision set."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--split",
            choices=[*SPLITS, "all"],
            default="dev",
            help="which cases (default dev; all is dev and test, heldout2 only on its own)",
        )
        parser.add_argument(
            "--json",
            dest="json_out",
            nargs="?",
            const="-",
            metavar="OUT",
            help="the results as JSON, to OUT or (no OUT) instead of the table on stdout",
        )
        parser.add_argument(
            "--show-misses", action="store_true", help="list every case taken wrongly and why it was expected"
        )
        parser.add_argument(
            "--llm", action="store_true", help="keep the configured llm.revision (default: rules)"
        )
        parser.add_argument(
            "--keep", action="store_true", help="commit the cases instead of rolling them back"
        )
        parser.add_argument(
            "--data",
            type=Path,
            default=None,
            help="folder holding the split files (dev.json, test.json, dev2.json, dev3.json, heldout2.json)",
        )

    def handle(self, *args, split, json_out, show_misses, llm, keep, data, **options):
        try:
            cases = load_cases(split, data) if data else load_cases(split)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read the revision set: {exc}") from exc
        try:
            report = measure(cases, split=split, llm=llm, keep=keep)
        except LookupError as exc:
            raise CommandError(f"no revision engine: {exc}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        document = json.dumps(report.as_dict(), indent=1, ensure_ascii=False) + "\n"
        if json_out == "-":
            self.stdout.write(document, ending="")
            return
        self.stdout.write(format_table(report, f"belief revision · {report.decider} · split {split}"))
        if show_misses:
            self.stdout.write(format_misses(report))
        if json_out:
            Path(json_out).write_text(document, encoding="utf-8")
            self.stdout.write(f"wrote {json_out}\n")
