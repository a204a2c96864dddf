from memory.context import context_build
from memory.services import note_store


def test_context_recalls_a_stored_note(subject, config, actor):
    note, _ = note_store(subject=subject, content="Alice's cat is called Miso", actor=actor, config=config)
    context = context_build(subject=subject, message="what is my cat called?", config=config)
    assert f"n:{note.pk}" in context.as_dict()["tail"]
