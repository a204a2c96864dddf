"""Fixtures the memory tests share."""

import pytest

from memory.services import fact_set, note_store


@pytest.fixture
def memories(subject, actor, config):
    """A few facts and notes about Alice that a question about Lisbon restaurants should find."""
    fact_set(subject=subject, key="name", value="Alice", actor=actor)
    fact_set(
        subject=subject, key="allergy", value="peanuts", pinned=False, keywords=["restaurant"], actor=actor
    )
    notes = [
        note_store(subject=subject, content=text, actor=actor, config=config)[0]
        for text in [
            "Alice's favourite restaurant is Taberna do Mar in Lisbon",
            "Alice had sushi with Bob at a Lisbon restaurant in May",
            "Lisbon trip: Alice booked the flight for March 3rd",
            "The team restaurant outing was cancelled because of rain",
            "Alice's cat Miso hates the vacuum cleaner",
        ]
    ]
    return notes


@pytest.fixture
def modes_dir(tmp_path, settings):
    """An empty MEMORYWEB_MODES_DIR; write NAME.json files into it. The mode registry is read
    afresh before and after the test."""
    from memory.modes import reset_modes_cache

    folder = tmp_path / "modes"
    folder.mkdir()
    settings.MEMORYWEB_MODES_DIR = str(folder)
    reset_modes_cache()
    yield folder
    settings.MEMORYWEB_MODES_DIR = ""
    reset_modes_cache()
