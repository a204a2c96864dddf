"""`manage.py bench context|locomo|cache|consolidate|load|tasks|embeddings`: the project's benchmarks (DESIGN §9).

`bench load` builds a temporary stack of its own (var dir, database, server processes on a
loopback port); `bench tasks` runs a real worker on a temporary broker folder and touches no
database, nor does `bench embeddings` (the local embedding models side by side). The others write to the configured database. Run them against a scratch one:

    export MEMORYWEB_VAR_DIR=$(mktemp -d)
    .venv/bin/python manage.py migrate
    .venv/bin/python manage.py bench context --notes 1000,10000,100000 --queries 200 --json ctx.json
    .venv/bin/python manage.py bench context --notes 10000,100000 --mode fts,hybrid --no-http --json ctx.json
    .venv/bin/python manage.py bench context --notes 100000 --subjects 1000 --mode fts,hybrid --json ctx1000.json
    .venv/bin/python manage.py bench locomo ../shared/bench/locomo/locomo-dev.json --json locomo.json
    .venv/bin/python manage.py bench locomo ../shared/bench/locomo/locomo-dev.json --reflect --json r.json
    .venv/bin/python manage.py bench locomo ../shared/bench/locomo/locomo-dev.json --k 10,25 --mode full,vector \
        --embedding-model paraphrase-MiniLM-L3-v2 --json l3.json
    .venv/bin/python manage.py bench embeddings ../shared/bench/locomo/locomo-dev.json --json models.json
    .venv/bin/python manage.py bench locomo ../shared/bench/locomo/locomo-dev.json --summaries --json s.json
    .venv/bin/python manage.py bench cache ../shared/bench/locomo/locomo-dev.json --samples 2 --limit 150
    .venv/bin/python manage.py bench consolidate --notes 10000,100000 --json consolidate.json
    .venv/bin/python manage.py bench load --concurrency 8 --duration 20 --json load.json
    .venv/bin/python manage.py bench load --layout production --web-processes 4 --json load-prod.json
    .venv/bin/python manage.py bench tasks --tasks 2000 --behind 200 --json tasks.json
"""

import argparse
import logging

from django.core.management.base import BaseCommand, CommandError

from memory.embedding_models import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from memory.embedding_models import MODELS as LOCAL_MODELS
from memoryweb.bench import cache as cache_bench
from memoryweb.bench import consolidate as consolidate_bench
from memoryweb.bench import context as context_bench
from memoryweb.bench import embed_models as embed_models_bench
from memoryweb.bench import load as load_bench
from memoryweb.bench import locomo as locomo_bench
from memoryweb.bench import tasks as tasks_bench
from memoryweb.bench.report import write_json
from memoryweb.celery import app as celery_app

SCRATCH_HINT = (
    "It writes to the configured database; run it against a scratch one, e.g. "
    "MEMORYWEB_VAR_DIR=$(mktemp -d) (then manage.py migrate)."
)


def model_list(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in LOCAL_MODELS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected models among {', '.join(LOCAL_MODELS)}, got {text!r}")
    return names


def int_list(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def mode_list(text: str) -> list[str]:
    modes = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [m for m in modes if m not in locomo_bench.MODES]
    if not modes or unknown:
        raise argparse.ArgumentTypeError(
            f"expected modes among {', '.join(locomo_bench.MODES)}, got {text!r}"
        )
    return modes


def context_mode_list(text: str) -> list[str]:
    modes = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [m for m in modes if m not in context_bench.MODES]
    if not modes or unknown:
        raise argparse.ArgumentTypeError(
            f"expected modes among {', '.join(context_bench.MODES)}, got {text!r}"
        )
    return modes


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction between 0 and 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected zero or more, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = int_list(text)
    if len(value) != 1:
        raise argparse.ArgumentTypeError(f"expected one positive integer, got {text!r}")
    return value[0]


class Command(BaseCommand):
    help = (
        "Benchmarks: context latency and ingest throughput (context), LoCoMo retrieval recall (locomo), "
        "the adaptive context cache on LoCoMo replays (cache), "
        "consolidation ticks (consolidate), the real server under mixed traffic (load), task throughput "
        "and priority on the embedded broker (tasks)."
    )

    def add_arguments(self, parser):
        subparsers = parser.add_subparsers(
            dest="bench", required=True, metavar="{context,locomo,cache,consolidate,load,tasks,embeddings}"
        )

        ctx = subparsers.add_parser(
            "context",
            help="ingest rate and context-build latency at growing note counts",
            description="Fill synthetic notes per size and time context builds in-process and over real HTTP "
            "(daphne on a free localhost port). " + SCRATCH_HINT,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        ctx.add_argument(
            "--notes", type=int_list, default=[1000, 10000, 100000], help="sizes, e.g. 1000,10000"
        )
        ctx.add_argument("--queries", type=positive_int, default=200, help="context builds per size")
        ctx.add_argument(
            "--subjects", type=positive_int, default=1, help="spread the notes over this many subjects"
        )
        ctx.add_argument("--seed", type=int, default=1)
        ctx.add_argument(
            "--ingest-sample",
            type=int,
            default=2000,
            help="notes and messages stored through the services to time ingest",
        )
        ctx.add_argument(
            "--k", type=positive_int, default=None, help="recallInjection.k (default: the config's)"
        )
        ctx.add_argument("--no-http", action="store_true", help="skip the HTTP measurement")
        ctx.add_argument(
            "--no-record",
            action="store_true",
            help="build without recording a RetrievalEvent (the API always records)",
        )
        ctx.add_argument(
            "--fresh", action="store_true", help="refill sizes that an earlier run already filled"
        )
        ctx.add_argument(
            "--mode",
            type=context_mode_list,
            default=["fts"],
            help="retrieval modes to time, e.g. fts,hybrid: fts, vector, hybrid, full; every mode but fts "
            "uses local embeddings (all-MiniLM-L6-v2), and the notes are embedded once before the first",
        )
        ctx.add_argument("--json", metavar="OUT", help="write the results as JSON to this file")

        loc = subparsers.add_parser(
            "locomo",
            help="turn-level retrieval recall on the LoCoMo dataset",
            description="Ingest LoCoMo conversations (each into its own subject of a new App) and score "
            "recall@k / hit@k of the evidence turns. " + SCRATCH_HINT,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        loc.add_argument("path", help="the LoCoMo JSON file (kept outside the project: CC BY-NC 4.0)")
        loc.add_argument("--k", type=int_list, default=[5, 10, 20, 50], help="cut-offs, e.g. 5,10,20,50")
        loc.add_argument("--limit-conversations", type=positive_int, default=None)
        loc.add_argument(
            "--skip-conversations",
            type=non_negative_int,
            default=0,
            help="leave out the first N conversations (then --limit-conversations applies)",
        )
        loc.add_argument("--record", action="store_true", help="record a RetrievalEvent per build (slower)")
        loc.add_argument("--details", action="store_true", help="include every question's scores in the JSON")
        loc.add_argument(
            "--reflect",
            action="store_true",
            help="also post every turn the way a chat app does (messages_add, default pipeline, heuristic "
            "reflection inline, default consent) into a second App and score what it stored, beside the "
            "harness figure",
        )
        loc.add_argument(
            "--reflect-consent",
            choices=["default", "allow"],
            default="default",
            help="with --reflect: the consent policy the posted subjects have (default: every sensitive "
            "category asks, so those turns and memories wait for the person; allow: the person allowed "
            "every category before posting, what they get once they approve everything asked)",
        )
        loc.add_argument(
            "--summaries",
            action="store_true",
            help="after scoring, run the session-summary pipeline on each conversation (backend local, no "
            "idle wait, no age limit) and score BM25 over the notes without and with every extraction item "
            "(and synopsis) as an extra unit; a unit counts for the at most 2 turns of its own session "
            "sharing the most distinct words with it (none if it shares none); recall@k by category, "
            "multi-hop (category 1) in particular",
        )
        loc.add_argument(
            "--mode",
            type=mode_list,
            default=["full"],
            help="retrieval modes to score side by side, the first being the primary one: "
            "fts, vector, hybrid, full (e.g. fts,vector,hybrid,full)",
        )
        loc.add_argument(
            "--embeddings",
            choices=["local", "none"],
            default="local",
            help="embedding provider for the vector list (local: a small model on onnxruntime, "
            "--embedding-model; none: full mode is full-text + signals)",
        )
        loc.add_argument(
            "--embedding-model",
            choices=list(LOCAL_MODELS),
            default=DEFAULT_LOCAL_MODEL,
            help="the local model (embeddings.model); each is described in memory/embedding_models.py",
        )
        loc.add_argument(
            "--no-bm25",
            action="store_true",
            help="skip the plain BM25 baseline (rank-bm25) scored in the same run",
        )
        loc.add_argument("--json", metavar="OUT", help="write the summary as JSON to this file")

        cch = subparsers.add_parser(
            "cache",
            help="context-cache hit rate, build latency and recall@10 with the cache on and off",
            description="Replay LoCoMo conversations turn by turn (a context built before each turn, then the "
            "turn posted; a session's turns stored as notes when it ends), then ask the questions as "
            "follow-up turns of one conversation; once with cache.enabled, once without, each in a new "
            "App. " + SCRATCH_HINT,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        cch.add_argument("path", help="the LoCoMo JSON file (kept outside the project: CC BY-NC 4.0)")
        cch.add_argument(
            "--samples", type=positive_int, default=None, help="replay the first N conversations"
        )
        cch.add_argument("--limit", type=positive_int, default=None, help="at most N turns per conversation")
        cch.add_argument(
            "--questions", type=positive_int, default=None, help="at most N questions per conversation"
        )
        cch.add_argument("--json", metavar="OUT", help="write the summary as JSON to this file")

        con = subparsers.add_parser(
            "consolidate",
            help="time per consolidation tick and clusters found on a synthetic linked corpus",
            description="Fill one subject per size with linked notes (topical clusters plus noise), then time "
            "consolidation ticks (heuristic distiller) and a vote-decay tick. " + SCRATCH_HINT,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        con.add_argument("--notes", type=int_list, default=[10000, 100000], help="sizes, e.g. 10000,100000")
        con.add_argument("--ticks", type=positive_int, default=3, help="consolidation ticks per size")
        con.add_argument("--seed", type=int, default=1)
        con.add_argument("--json", metavar="OUT", help="write the results as JSON to this file")

        load = subparsers.add_parser(
            "load",
            help="req/s and p50/p95/p99 of the real server under mixed context/ingest traffic",
            description="Start memoryweb the way it is deployed, on a loopback port with its own temporary "
            "var dir and database, seed one App, then keep --concurrency requests in flight for --duration "
            "seconds: a trivial GET as the baseline, then context builds mixed with posted turns. It never "
            "touches the configured database.",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        load.add_argument(
            "--layout",
            choices=load_bench.LAYOUTS,
            default="embedded",
            help="embedded: manage.py runall on SQLite; production: N daphne processes, a Celery worker "
            "and beat on PostgreSQL with Redis as broker and channel layer",
        )
        load.add_argument(
            "--web-processes", type=positive_int, default=1, help="daphne processes sharing the port"
        )
        load.add_argument("--concurrency", type=positive_int, default=8, help="requests kept in flight")
        load.add_argument("--duration", type=positive_float, default=10.0, help="seconds per phase")
        load.add_argument("--notes", type=positive_int, default=2000, help="notes seeded in the App")
        load.add_argument(
            "--subjects", type=positive_int, default=8, help="subjects the notes are spread over"
        )
        load.add_argument(
            "--context-share",
            type=share,
            default=0.7,
            help="fraction of the mixed phase that is POST /context (the rest: messages and responses)",
        )
        load.add_argument("--seed", type=int, default=1)
        load.add_argument("--host", default="127.0.0.1", help="loopback address to serve on")
        load.add_argument(
            "--postgres",
            default="postgresql://postgres@127.0.0.1:5432/postgres",
            help="production layout: a PostgreSQL URL allowed to create and drop the run's database",
        )
        load.add_argument(
            "--redis", default="redis://127.0.0.1:6379/13", help="production layout: broker and channel layer"
        )
        load.add_argument("--json", metavar="OUT", help="write the results as JSON to this file")

        tsk = subparsers.add_parser(
            "tasks",
            help="tasks/s through a real worker on the embedded broker, and reflection-priority latency",
            description="Start a real Celery worker on a temporary broker folder, time trivial tasks queued "
            "ahead of it, then time a reflect-queue task queued behind background work (and the same task "
            "on the background queue). No database is touched.",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        tsk.add_argument("--tasks", type=positive_int, default=2000, help="trivial tasks to time")
        tsk.add_argument(
            "--behind", type=positive_int, default=200, help="background tasks ahead of the probe"
        )
        tsk.add_argument(
            "--work-ms", type=float, default=50.0, help="what each background task costs (sleeps)"
        )
        tsk.add_argument(
            "--concurrency", type=positive_int, default=2, help="worker processes (runall uses 2)"
        )
        tsk.add_argument("--json", metavar="OUT", help="write the results as JSON to this file")

        emb = subparsers.add_parser(
            "embeddings",
            help="the local embedding models side by side: load, query-embedding p50/p95, batch throughput",
            description="Load every local embedding model that is installed (memory/embedding_models.py), "
            "then embed each LoCoMo question alone as a query, the models taking turns, and the dialogue "
            "turns in batches. Recall is bench locomo --embedding-model. No database is touched.",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        emb.add_argument("path", help="the LoCoMo JSON file (its questions and turns are the texts)")
        emb.add_argument(
            "--models",
            type=model_list,
            default=None,
            help=f"comma-separated, among {', '.join(LOCAL_MODELS)} (default: all)",
        )
        emb.add_argument("--queries", type=positive_int, default=300, help="questions timed per model")
        emb.add_argument("--turns", type=positive_int, default=500, help="turns embedded in batches")
        emb.add_argument("--json", metavar="OUT", help="write the results as JSON to this file")

    def handle(self, *args, bench, **options):
        if bench == "load":
            summary = self._load(options)
        elif bench == "tasks":
            summary = self._tasks(options)
        elif bench == "embeddings":
            summary = self._embeddings(options)
        else:
            summary = self._in_process(bench, options)
        if options["json"]:
            write_json(options["json"], summary)
            self.stdout.write(f"wrote {options['json']}")

    def _in_process(self, bench: str, options) -> dict:
        """The benches that run in this process (context, consolidate, locomo).

        Background work that a store starts (linking a new note to its neighbours) runs
        inline here: it is part of the measured ingest, and nothing piles up in a broker
        that no worker reads during a benchmark. Put back as it was afterwards: a bench run
        from a test (or any caller in the same process) would otherwise leave every later
        task running inline."""
        eager = celery_app.conf.task_always_eager
        celery_app.conf.task_always_eager = True
        logging.getLogger("celery.app.trace").setLevel(logging.WARNING)  # one line per task otherwise
        self.stdout.write(f"database: {context_bench.describe_db()}")
        self.stdout.write("background tasks run inline (eager), so ingest includes linking")
        try:
            if bench == "context":
                return self._context(options)
            if bench == "consolidate":
                return self._consolidate(options)
            if bench == "cache":
                return self._cache(options)
            return self._locomo(options)
        finally:
            celery_app.conf.task_always_eager = eager

    def _tasks(self, options) -> dict:
        summary = tasks_bench.run(
            tasks=options["tasks"],
            behind=options["behind"],
            work_ms=max(options["work_ms"], 0.0),
            concurrency=options["concurrency"],
            out=self._out,
        )
        self.stdout.write("")
        self.stdout.write(tasks_bench.render(summary))
        return summary

    def _embeddings(self, options) -> dict:
        try:
            summary = embed_models_bench.run(
                options["path"],
                models=options["models"],
                queries=options["queries"],
                turns=options["turns"],
                out=self._out,
            )
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {options['path']}: {exc}") from exc
        self.stdout.write("")
        self.stdout.write(embed_models_bench.render(summary))
        return summary

    def _out(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()

    def _context(self, options) -> dict:
        self.stdout.write(
            "fill: most notes are bulk-inserted with Note.objects.bulk_create (the full-text index is kept "
            "by the insert triggers / GIN index); the last --ingest-sample notes and as many messages go "
            "through note_store and message_add to time ingest."
        )
        summary = context_bench.run(
            sizes=options["notes"],
            queries=options["queries"],
            subjects=options["subjects"],
            seed=options["seed"],
            ingest_sample=max(options["ingest_sample"], 0),
            http=not options["no_http"],
            k=options["k"],
            record=not options["no_record"],
            fresh=options["fresh"],
            modes=options["mode"],
            out=self._out,
        )
        self.stdout.write("")
        self.stdout.write(context_bench.render(summary))
        return summary

    def _locomo(self, options) -> dict:
        try:
            data = locomo_bench.load(options["path"])
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {options['path']}: {exc}") from exc
        ks = sorted(set(options["k"]))
        if options["reflect"]:
            self.stdout.write(
                "reflect: every turn is also posted through chat.services.messages_add (the REST messages/"
                "responses path) into a second App with the default pipeline: first speaker user, second "
                "assistant, each with its LoCoMo speaker name, no note stored by the benchmark; each assistant message queues its reflection "
                "(heuristic extractor, run inline), "
                + (
                    "every consent category allowed."
                    if options["reflect_consent"] == "allow"
                    else "default consent policy."
                )
            )
        try:
            summary = locomo_bench.run(
                data,
                ks=ks,
                modes=options["mode"],
                embeddings=options["embeddings"],
                embedding_model=options["embedding_model"] if options["embeddings"] == "local" else "",
                bm25=not options["no_bm25"],
                limit_conversations=options["limit_conversations"],
                skip_conversations=options["skip_conversations"],
                record=options["record"],
                details=options["details"],
                reflect=options["reflect"],
                reflect_consent=options["reflect_consent"],
                summaries=options["summaries"],
                out=self._out,
            )
        except locomo_bench.BenchError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("")
        self.stdout.write(locomo_bench.render(summary, ks))
        return summary

    def _cache(self, options) -> dict:
        try:
            data = cache_bench.load(options["path"])
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {options['path']}: {exc}") from exc
        summary = cache_bench.run(
            data,
            samples=options["samples"],
            limit=options["limit"],
            questions=options["questions"],
            out=self._out,
        )
        self.stdout.write("")
        self.stdout.write(cache_bench.render(summary))
        return summary

    def _load(self, options) -> dict:
        if not load_bench.loopback(options["host"]):
            raise CommandError(
                f"--host {options['host']} is not a loopback address: bench load only runs locally"
            )
        try:
            summary = load_bench.run(
                layout=options["layout"],
                web_processes=options["web_processes"],
                concurrency=options["concurrency"],
                duration=options["duration"],
                notes=options["notes"],
                subjects=options["subjects"],
                seed_value=options["seed"],
                context_share=options["context_share"],
                host=options["host"],
                postgres_url=options["postgres"],
                redis_url=options["redis"],
                out=self._out,
            )
        except load_bench.BenchError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("")
        self.stdout.write(load_bench.render(summary))
        return summary

    def _consolidate(self, options) -> dict:
        summary = consolidate_bench.run(
            sizes=options["notes"], ticks=options["ticks"], seed=options["seed"], out=self._out
        )
        self.stdout.write("")
        self.stdout.write(consolidate_bench.render(summary))
        return summary
