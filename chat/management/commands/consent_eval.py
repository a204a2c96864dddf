"""`manage.py consent_eval [--split NAME ...] [--errors] [--inherit SCOPE] [--json OUT]`: per-category precision and
recall of the consent gate, scored on each labelled message directly (what the evidence index
asks `classify_category`) and, on the extraction set, over the facts and notes drawn from it.

Without --split it scores the development splits only: "dev" of tests/data/consent_labelled.json
and dev, dev2, dev3, dev4 of tests/data/extraction_labelled.json. The held-back ("heldback") and
untouched (heldout3, heldout5, heldout8) splits are scored only when named, one at a
time, and never list their misses. Reads no database."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.reflection.evaluation import DEVELOPMENT, UNTOUCHED
from chat.reflection.gate_evaluation import (
    CONSENT_DATA,
    CONSENT_DEVELOPMENT,
    CONSENT_HELD_BACK,
    EXTRACTION_DATA,
    evaluate_extracted,
    evaluate_messages,
    format_report,
)


class Command(BaseCommand):
    help = "Precision/recall of consent category detection, per message and over extracted items."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--split",
            action="append",
            choices=[*CONSENT_DEVELOPMENT, *CONSENT_HELD_BACK, *DEVELOPMENT, *UNTOUCHED],
            help="score this split alone (repeatable); default: the development splits",
        )
        parser.add_argument(
            "--errors", action="store_true", help="list the missed categories (development only)"
        )
        parser.add_argument(
            "--inherit",
            choices=["clause", "sentence", "message"],
            help="score extracted items as if each took the category of that part of its message "
            "when its own words have none (categories.with_source_categories)",
        )
        parser.add_argument(
            "--json", dest="json_out", type=Path, metavar="OUT", help="also write the metrics here"
        )

    def handle(
        self, *args, split: list[str] | None, errors: bool, json_out: Path | None, inherit=None, **options
    ):
        runs: list[tuple[str, Path, tuple[str, ...]]] = []
        if not split:
            runs = [
                ("consent dev", CONSENT_DATA, CONSENT_DEVELOPMENT),
                ("extraction development", EXTRACTION_DATA, DEVELOPMENT),
            ]
        else:
            for name in split:
                if name in (*CONSENT_DEVELOPMENT, *CONSENT_HELD_BACK) and name not in DEVELOPMENT:
                    runs.append((f"consent {name}", CONSENT_DATA, (name,)))
                elif name == "dev":
                    runs += [
                        ("consent dev", CONSENT_DATA, (name,)),
                        ("extraction dev", EXTRACTION_DATA, (name,)),
                    ]
                else:
                    runs.append((f"extraction {name}", EXTRACTION_DATA, (name,)))
        measured = {*CONSENT_HELD_BACK, *UNTOUCHED}
        if errors and any(set(splits) & measured for _, _, splits in runs):
            raise CommandError(
                "--errors lists misses of development splits only; a measured split stays unread"
            )
        payload = {}
        for title, path, splits in runs:
            reports = {f"{title}, per message": evaluate_messages(path, splits)}
            if path == EXTRACTION_DATA:
                label = f", items inheriting their {inherit}'s category" if inherit else ""
                reports[f"{title}, over extracted facts and notes{label}"] = evaluate_extracted(
                    path, splits, inherit or ""
                )
            for name, report in reports.items():
                self.stdout.write(format_report(report, name) + "\n")
                if errors:
                    self.stdout.write(
                        "\n".join(f"  missed {', '.join(m)}: {cid}" for cid, m in report.misses) + "\n"
                    )
                payload[name] = report.as_dict()
        if json_out:
            json_out.write_text(json.dumps(payload, indent=2) + "\n")
            self.stdout.write(f"wrote {json_out}")
