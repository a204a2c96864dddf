"""`manage.py extraction_eval [--json OUT] [--errors]`: precision and recall of the heuristic
extractor on the hand-labelled messages, for all of them, the development sets together, and
each split alone (the untouched ones are the figures that say how it does on new text). Reads
no database."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.reflection.evaluation import (
    DEFAULT_DATA,
    DEVELOPMENT,
    SPLITS,
    evaluate,
    format_errors,
    format_table,
)


class Command(BaseCommand):
    help = "Precision/recall of the heuristic extractor (facts, notes, categories) on the labelled set."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="labelled set (JSON)")
        parser.add_argument(
            "--json", dest="json_out", type=Path, metavar="OUT", help="also write the metrics to this file"
        )
        parser.add_argument("--errors", action="store_true", help="list every miss and extra, per message")

    def handle(self, *args, data: Path, json_out: Path | None, errors: bool, **options):
        if not data.exists():
            raise CommandError(f"no labelled set at {data}")
        # The untouched splits are only ever reported alone, never merged with a development set.
        reports = {"all": evaluate(data), "all development": evaluate(data, DEVELOPMENT)}
        reports |= {split: evaluate(data, split) for split in SPLITS}
        for title, report in reports.items():
            self.stdout.write(format_table(report, title) + "\n")
        if errors:
            self.stdout.write(format_errors(reports["all"]))
        if json_out:
            payload = {title: report.as_dict() for title, report in reports.items()}
            json_out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
            self.stdout.write(f"wrote {json_out}")
