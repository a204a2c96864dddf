"""Assistant modes: the plain-language summary read off a manifest, and the system check that
reports a broken custom manifest (naming the file and the field) or an unknown modes.default."""

import pytest

from memory.checks import assistant_modes
from memory.modes import mode_from_manifest, mode_get, modes_all
from memory.modes.summary import CATEGORY_NAMES, mode_summary
from memory.services import app_config_set
from memoryweb.errors import ConfigError
from tests.modes_support import mode_manifest, write_manifest


def _summary(**changes) -> list[str]:
    return mode_summary(mode_from_manifest(mode_manifest(**changes), source="ops_review.json"))


def test_the_summary_says_what_a_custom_manifest_does():
    lines = _summary()

    assert "reaches other projects' memories" in lines
    assert "leaves out unscoped memories" in lines
    assert "health, relationships may render when approved; other sensitive categories never do" in lines
    assert "no procedures section" in lines
    assert "favours procedures and lessons, in that order" in lines
    assert "shows up to 2 notes or turns in full" in lines
    assert "leaves out items whose applicability is under 0.25" in lines
    assert "personal facts matter little" in lines
    assert "first-hand, confirmed evidence outranks inference" in lines
    assert "the recent transcript renders" in lines
    assert "no interaction contract renders" in lines


def test_the_summary_follows_the_manifest_when_it_changes():
    lines = _summary(
        scopes=["same"],
        privacyCeiling={"allow": []},
        sections={"lessons": 0},
        renders={"contract": True, "state": False, "topics": True, "transcript": False},
    )

    assert "never reaches other projects' memories" in lines
    assert "no sensitive category renders, even when approved" in lines
    assert "no lessons section" in lines and "no procedures section" not in lines
    assert "how the person likes to work here (the interaction contract) renders" in lines
    assert "no recent transcript renders" in lines
    # a knob in the middle says nothing
    assert not any("feelings" in line for line in lines)


def test_every_builtin_mode_has_a_summary_of_its_own():
    summaries = {m.name: tuple(mode_summary(m)) for m in modes_all()}

    assert len(summaries) == 7
    assert len(set(summaries.values())) == 7
    assert "no sensitive category renders, even when approved" in summaries["biographical_interview"]


# --- the system check --------------------------------------------------------------------
def _errors():
    return [m for m in assistant_modes() if m.level >= 40]


@pytest.mark.parametrize(
    "document,field",
    [
        ({k: v for k, v in mode_manifest().items() if k != "renders"}, "renders"),
        (mode_manifest(scopes="same"), "scopes"),
        (mode_manifest(colour="blue"), "colour"),
        (mode_manifest(retrieval={"k": "four"}), "retrieval.k"),
    ],
    ids=["missing required field", "wrong type", "unknown field", "wrong type nested"],
)
def test_a_broken_custom_manifest_is_a_check_error_naming_the_file_and_the_field(modes_dir, document, field):
    path = write_manifest(modes_dir, document, file_name="ops_review.json")

    errors = _errors()

    assert len(errors) == 1
    assert str(path) in errors[0].msg
    assert f": {field}:" in errors[0].msg


def test_a_manifest_whose_name_is_not_its_file_name_is_a_check_error(modes_dir):
    path = write_manifest(modes_dir, mode_manifest(name="ops_review"), file_name="ops.json")

    (error,) = _errors()

    assert str(path) in error.msg and ": name:" in error.msg and "'ops'" in error.msg


def test_a_manifest_that_is_not_json_is_a_check_error_naming_the_file(modes_dir):
    path = modes_dir / "ops_review.json"
    path.write_text('{"name": "ops_review",')

    (error,) = _errors()

    assert str(path) in error.msg and "not JSON" in error.msg and "line 1" in error.msg


def test_a_missing_modes_folder_is_a_check_error_naming_the_setting(modes_dir, settings):
    settings.MEMORYWEB_MODES_DIR = str(modes_dir / "nowhere")

    (error,) = _errors()

    assert "MEMORYWEB_MODES_DIR" in error.msg and str(modes_dir / "nowhere") in error.msg


def test_valid_custom_manifests_pass_the_check(modes_dir):
    write_manifest(modes_dir, mode_manifest())

    assert _errors() == []


def test_an_unknown_modes_default_is_a_check_error_naming_the_key(settings):
    settings.MEMORY = {"modes": {"default": "karaoke"}}

    (error,) = _errors()

    assert "memory.modes.default" in error.msg and "karaoke" in error.msg


def test_a_custom_modes_default_is_known_once_its_manifest_is_there(modes_dir, settings):
    settings.MEMORY = {"modes": {"default": "ops_review"}}
    assert len(_errors()) == 1

    write_manifest(modes_dir, mode_manifest())

    assert _errors() == []


def test_a_custom_manifest_named_like_a_builtin_replaces_it(modes_dir):
    write_manifest(modes_dir, mode_manifest(name="coding_debug", title="Our coding mode"))

    mode = mode_get("coding_debug")

    assert (mode.title, mode.builtin) == ("Our coding mode", False)
    assert [m.name for m in modes_all()].count("coding_debug") == 1


def test_the_summary_of_a_mode_that_allows_everything_says_so():
    lines = _summary(
        privacyCeiling={"allow": sorted(CATEGORY_NAMES)},
        retrieval={"minApplicability": 0},
    )

    assert "every sensitive category may render when approved" in lines
    assert "leaves out no item for low applicability" in lines


def test_an_apps_config_naming_an_unknown_default_mode_is_refused_naming_the_key(app, actor):
    with pytest.raises(ConfigError) as error:
        app_config_set(app=app, config={"memory": {"modes": {"default": "karaoke"}}}, actor=actor)

    assert error.value.key == "memory.modes.default" and "karaoke" in error.value.message
    app.refresh_from_db()
    assert app.config == {}


def test_an_apps_config_may_name_a_known_default_mode(app, actor):
    app_config_set(app=app, config={"memory": {"modes": {"default": "companion"}}}, actor=actor)

    app.refresh_from_db()
    assert app.config["memory"]["modes"]["default"] == "companion"
