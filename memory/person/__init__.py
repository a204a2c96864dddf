"""The person behind the messages (issue 13): how they like to work in each mode (the
interaction contract, contract.py), how they are right now in a conversation (state.py) and
what came of earlier advice (consequence chains, consequences.py). Each module observes,
and renders its `###` section of the context tail (memory/context.py `_person_blocks`)."""
