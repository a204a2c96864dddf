"""`manage.py summaries_eval [--provider SPEC --base-url URL --timeout S] [--config JSON] [--json OUT]
[--record CASSETTE] [--misses]`:
how much of the labelled conversation set (tests/data/session_summaries/sessions.json) the
session-summary pipeline captures, per kind of item (chat/summaries/evaluation.py says how an
item counts as captured).

It loads the set into a new App (named summaries-eval-<time>, backend "local", every
conversation due) and runs the pipeline once with force, as `memory rebuild` would. Like
`manage.py bench`, it writes to the configured database: run it against a scratch one
(`MEMORYWEB_VAR_DIR=$(mktemp -d)`, then `manage.py migrate`). The App stays, so its documents
can be read in the dashboard afterwards.

With `--provider none` (the default) the heuristic path runs. With a model spec
(`openai-compatible/qwen2.5:7b --base-url http://127.0.0.1:11434/v1`) the App's
`llm.summaries` is that model; `--record PATH` then saves every request and answer as a
cassette that tests/llm_cassette.py replays. `--config` merges a `memory` tree into the App's
config, e.g. `{"memories": {"stageOneOutputTokens": 600, "consolidationOutputTokens": 900}}` to
keep a slow local model's answers short."""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.summaries.evaluation import (
    CONSENT_MODES,
    DEFAULT_DATA,
    format_misses,
    format_table,
    load_set,
    measure,
)
from chat.summaries.recording import CassetteRecorder, add_record_arguments
from memory.config import get_config, validate_app_config
from memoryweb.errors import ConfigError
from memoryweb.llm.client import set_http_client_factory
from memoryweb.llm.spec import component_spec


class Command(BaseCommand):
    help = "Capture of the session-summary pipeline (heuristic or a model) on the labelled conversation set."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="labelled set (JSON)")
        parser.add_argument(
            "--json", dest="json_out", type=Path, metavar="OUT", help="also write the scores to this file"
        )
        parser.add_argument(
            "--misses", action="store_true", help="list every missed item and present distractor"
        )
        parser.add_argument(
            "--provider",
            default="none",
            metavar="SPEC",
            help="none (the heuristic path) or a model spec such as openai-compatible/MODEL",
        )
        parser.add_argument(
            "--base-url", default=None, help="the server for openai-compatible (default: memory.llm.baseUrl)"
        )
        parser.add_argument(
            "--timeout", type=float, default=None, help="seconds per model call (default: llm.timeoutSeconds)"
        )
        parser.add_argument(
            "--consent",
            choices=CONSENT_MODES,
            default="approved",
            help="approved: every consent category allowed first, as after the person approved the "
            "sensitive turns; default: the default policies (sensitive turns wait and stay out)",
        )
        parser.add_argument(
            "--config",
            dest="config_json",
            default=None,
            metavar="JSON",
            help='merged into the App\'s memory config, e.g. {"memories": {"stageOneOutputTokens": 600}}',
        )
        add_record_arguments(parser)

    def _llm(self, provider: str, base_url: str | None, timeout: float | None) -> dict | None:
        if provider.strip().lower() == "none":
            return None
        llm: dict = {"summaries": provider}
        if base_url is not None:
            llm["baseUrl"] = base_url
        if timeout is not None:
            llm["timeoutSeconds"] = timeout
        try:
            component_spec("summaries", get_config().with_overrides({"llm": llm}))
        except ConfigError as exc:
            raise CommandError(exc.message) from exc
        return llm

    def _overrides(self, raw: str | None) -> dict | None:
        if raw is None:
            return None
        try:
            tree = json.loads(raw)
        except ValueError as exc:
            raise CommandError(f"--config is not JSON: {exc}") from exc
        if isinstance(tree, dict) and set(tree) == {"memory"}:
            tree = tree["memory"]
        try:
            validate_app_config({"memory": tree})
        except ConfigError as exc:
            raise CommandError(f"--config: {exc.message}") from exc
        return tree

    def handle(self, *args, data: Path, json_out: Path | None, misses: bool, record: Path | None, **options):
        if not data.exists():
            raise CommandError(f"no labelled set at {data}")
        labelled = load_set(data)
        llm = self._llm(options["provider"], options["base_url"], options["timeout"])
        overrides = self._overrides(options["config_json"])
        if record is not None and llm is None:
            raise CommandError("--record needs --provider (the heuristic path makes no request)")
        recorder = previous = None
        if record is not None:
            recorder = CassetteRecorder([m["text"] for c in labelled["conversations"] for m in c["messages"]])
            previous = recorder.install()
        try:
            report = measure(labelled, llm=llm, config=overrides, consent=options["consent"])
        finally:
            if recorder is not None:
                set_http_client_factory(previous)
        name = options["provider"] if llm else "heuristic"
        self.stdout.write(f"app {report.app}; run: {json.dumps(report.run, sort_keys=True)}\n")
        title = f"session summaries · {name} · {data.name} · consent {options['consent']}"
        self.stdout.write(format_table(report, title))
        if misses:
            self.stdout.write(format_misses(report))
        if recorder is not None and record is not None:
            about = f"summaries_eval --provider {name} on {data.name}"
            if overrides:
                about += f" with --config {json.dumps(overrides, sort_keys=True)}"
            if options["about"]:
                about += f". {options['about']}"
            recorder.write(record, about=about)
            self.stdout.write(f"recorded {len(recorder.exchanges)} exchanges to {record}\n")
        if json_out:
            payload = {"provider": name, "data": data.name, **report.as_dict()}
            json_out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
            self.stdout.write(f"wrote {json_out}\n")
        if report.as_dict()["secrets_leaked"]:
            sys.stderr.write("a secret of the set reached a document or an extraction\n")
