"""`manage.py extraction_eval [--provider SPEC --base-url URL] [--split NAME …] [--json OUT] [--errors]`:
precision and recall of reflection's extraction on the hand-labelled messages, for all of them,
the development sets together, and each split alone (the untouched ones are the figures that
say how it does on new text).

With `--provider none` (the default) it scores the heuristic extractor and reads no database.
With a model spec (`openai-compatible/qwen2.5:7b --base-url http://127.0.0.1:11434/v1`,
`openai/gpt-4o-mini`, …) each labelled message goes once through reflection's LLM path
(chat/reflection/model_extraction.py), falling back to the heuristic extractor where the answer
is unusable, as a reflection does; the LLM client counts its calls in the database (run
`manage.py migrate` first); `--record CASSETTE` keeps every exchange with it in the format
tests/llm_cassette.py replays, so a measured run can be replayed in a test.
docs/local-models.md has the recipe for a local server."""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.reflection.evaluation import (
    DEFAULT_DATA,
    DEVELOPMENT,
    SPLITS,
    evaluate,
    format_errors,
    format_table,
    load_cases,
)
from chat.reflection.heuristics import extract
from chat.reflection.model_extraction import ModelExtractor
from chat.summaries.recording import CassetteRecorder, add_record_arguments
from memory.config import get_config
from memoryweb.errors import ConfigError
from memoryweb.llm import client_for, set_http_client_factory


class Command(BaseCommand):
    help = "Precision/recall of reflection's extractor (heuristic or a model) on the labelled set."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="labelled set (JSON)")
        parser.add_argument(
            "--json", dest="json_out", type=Path, metavar="OUT", help="also write the metrics to this file"
        )
        parser.add_argument("--errors", action="store_true", help="list every miss and extra, per message")
        parser.add_argument(
            "--provider",
            default="none",
            metavar="SPEC",
            help="none (the heuristic extractor) or a model spec such as openai-compatible/MODEL",
        )
        parser.add_argument(
            "--base-url", default=None, help="the server for openai-compatible (default: memory.llm.baseUrl)"
        )
        parser.add_argument(
            "--timeout", type=float, default=None, help="seconds per model call (default: llm.timeoutSeconds)"
        )
        parser.add_argument(
            "--max-retries", type=int, default=None, help="retries per model call (default: llm.maxRetries)"
        )
        parser.add_argument(
            "--split",
            dest="splits",
            action="append",
            choices=SPLITS,
            help="score only these splits (repeat the option); default: all of them",
        )
        add_record_arguments(parser)

    def _extractor(self, provider: str, base_url: str | None, timeout: float | None, retries, verbosity: int):
        if provider.strip().lower() == "none":
            return extract, "heuristic"
        llm: dict = {"reflection": provider}
        if base_url is not None:
            llm["baseUrl"] = base_url
        if timeout is not None:
            llm["timeoutSeconds"] = timeout
        if retries is not None:
            llm["maxRetries"] = retries
        try:
            config = get_config().with_overrides({"llm": llm})
            client = client_for("reflection", config)
        except ConfigError as exc:
            raise CommandError(exc.message) from exc
        if client is None:
            raise CommandError(f"{provider}: no API key in the environment (see docs/configuration.md)")

        def progress(text: str, source: str, seconds: float) -> None:
            if verbosity >= 2:
                sys.stderr.write(f"{source:<9} {seconds:6.1f}s  {text[:70]}\n")

        return ModelExtractor(client, config, on_message=progress), provider

    def handle(self, *args, data: Path, json_out: Path | None, errors: bool, record: Path | None, **options):
        if not data.exists():
            raise CommandError(f"no labelled set at {data}")
        if record is not None and options["provider"].strip().lower() == "none":
            raise CommandError("--record needs --provider (the heuristic extractor makes no request)")
        recorder = previous = None
        if record is not None:
            _, cases = load_cases(data)
            recorder = CassetteRecorder([c["text"] for c in cases], name="extraction")
            previous = recorder.install()  # before the client is made: it takes its transport then
        try:
            extractor, name = self._extractor(
                options["provider"],
                options["base_url"],
                options["timeout"],
                options["max_retries"],
                options["verbosity"],
            )
            splits = tuple(options["splits"] or SPLITS)
            # The untouched splits are only ever reported alone, never merged with a development set.
            development = tuple(s for s in splits if s in DEVELOPMENT)
            reports = {}
            if not options["splits"]:
                reports["all"] = evaluate(data, extractor=extractor)
            if development:
                reports["all development"] = evaluate(data, development, extractor=extractor)
            reports |= {split: evaluate(data, split, extractor=extractor) for split in splits}
        finally:
            if recorder is not None:
                set_http_client_factory(previous)
        summary = extractor.summary() if isinstance(extractor, ModelExtractor) else None
        for title, report in reports.items():
            self.stdout.write(format_table(report, title if summary is None else f"{title} · {name}") + "\n")
        if summary:
            fallbacks = ", ".join(f"{k} {v}" for k, v in sorted(summary["fallbacks"].items())) or "none"
            self.stdout.write(
                f"model answers: {summary['answered']}/{summary['messages']} messages; heuristic "
                f"fallbacks: {fallbacks}; {summary['seconds_per_message']} s per message\n"
            )
        if errors:
            self.stdout.write(format_errors(next(iter(reports.values()))))
        if recorder is not None and record is not None:
            about = f"extraction_eval --provider {name} on {data.name}, splits {', '.join(splits)}"
            if options["about"]:
                about += f". {options['about']}"
            recorder.write(record, about=about)
            self.stdout.write(f"recorded {len(recorder.exchanges)} exchanges to {record}\n")
        if json_out:
            payload: dict = {title: report.as_dict() for title, report in reports.items()}
            payload["extractor"] = {"name": name, **(summary or {})}
            json_out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
            self.stdout.write(f"wrote {json_out}")
