"""System checks: report the storage engine's capabilities, a broken MEMORY tree and a broken
assistant-mode manifest."""

from django.core import checks
from django.db import connection

from memory.config import MemoryConfig, base_config, get_config, local_embeddings_installed, reset_cache
from memory.embedding_models import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from memory.embedding_models import MODELS as LOCAL_MODELS
from memory.embedding_models import model_problem
from memory.modes import mode_get, modes_all, reset_modes_cache
from memoryweb.db.sqlite.base import EXTENSION_STATUS
from memoryweb.errors import ConfigError, InvalidInput
from memoryweb.llm import provider_status


@checks.register()
def storage_engine(app_configs=None, databases=None, **kwargs):
    if connection.vendor != "sqlite":
        return [
            checks.Info(f"database: {connection.vendor}; full-text search via tsvector", id="memoryweb.I002")
        ]

    try:
        connection.ensure_connection()
    except Exception as exc:  # report, don't crash the check run
        return [checks.Error(f"cannot open the SQLite database: {exc}", id="memoryweb.E002")]
    status = EXTENSION_STATUS
    summary = f"SQLite {status['sqlite_version']} via {status['driver']}; FTS5 built in"
    messages: list[checks.CheckMessage] = []
    if status.get("sqlite_problem"):
        messages.append(
            checks.Warning(
                f"SQLite {status['sqlite_version']} {status['sqlite_problem']}: install the "
                "project's pysqlite3 (`make install`)",
                id="memoryweb.W004",
            )
        )
    if status.get("vec"):
        messages.append(checks.Info(f"{summary}; sqlite-vec {status['vec']} loaded", id="memoryweb.I001"))
    else:
        messages.append(
            checks.Warning(
                f"{summary}; sqlite-vec NOT loaded ({status.get('vec_error')}): vector search uses brute force",
                id="memoryweb.W001",
            )
        )
    return messages


@checks.register()
def memory_config(app_configs=None, **kwargs):

    reset_cache()
    try:
        base_config()
    except ConfigError as exc:
        return [checks.Error(str(exc), id="memoryweb.E001")]

    messages: list[checks.CheckMessage] = []
    if not local_embeddings_installed():
        messages.append(
            checks.Info(
                "embeddings: the local model is not installed, so embeddings.provider defaults to "
                "none and recall is full text only; install it with pip install 'memoryweb[embeddings]'",
                id="memoryweb.I004",
            )
        )
    config = get_config()
    if config["embeddings.enabled"] and config["embeddings.provider"] == "local":
        model = LOCAL_MODELS[config["embeddings.model"] or DEFAULT_LOCAL_MODEL]
        problem = model_problem(model)
        if problem:
            messages.append(
                checks.Error(
                    f"memory.embeddings.model {model.name}: {problem}; recall falls back to full text",
                    id="memoryweb.E006",
                )
            )
    for row in provider_status(config):
        if not row["problem"]:
            continue
        if row["provider"]:  # a valid spec whose API key is missing: it falls back, say so
            messages.append(checks.Warning(row["problem"], id="memoryweb.W003"))
        else:
            messages.append(checks.Error(row["problem"], id="memoryweb.E003"))
    return messages


@checks.register()
def assistant_modes(app_configs=None, **kwargs):
    """Every manifest loads (built in and MEMORYWEB_MODES_DIR) — an error names the file and the
    field — and `memory.modes.default` names a known mode."""
    reset_cache()
    reset_modes_cache()
    messages: list[checks.CheckMessage] = []
    try:
        modes_all()
    except ConfigError as exc:
        return [checks.Error(str(exc), id="memoryweb.E004")]
    try:
        default = MemoryConfig(base_config())["modes.default"]
    except ConfigError:
        return messages  # memory_config reports a broken MEMORY tree
    try:
        mode_get(default, field="memory.modes.default")
    except InvalidInput as exc:
        messages.append(checks.Error(f"memory.modes.default: {exc.message}", id="memoryweb.E005"))
    return messages
