"""A backlog of turns reflected at once keeps every turn's memories (caps apply per message),
and whatever a cap does drop is counted: in the run's stats, a counter, and diagnose."""

from datetime import UTC, datetime, timedelta

from chat.models import ReflectionRun
from chat.reflect import turn_reflect
from memory.diagnose import diagnose
from memory.models import Note, PendingMemory, ProfileFact
from memory.services import app_config_set

TOPICS = [
    "sushi", "jazz", "hiking", "chess", "tea", "opera", "kayaking", "sudoku",
    "pottery", "cycling", "tango", "origami", "baking", "sailing", "knitting", "skiing",
    "poetry", "archery", "gardening", "climbing", "surfing", "karaoke", "fencing", "birdwatching",
]  # fmt: skip
REMEMBERED = [
    "the spare key is under the blue flowerpot",
    "my locker number at the gym is 42",
    "the wifi router lives in the hall cupboard",
    "the recycling goes out on Tuesday nights",
    "the boiler needs servicing every autumn",
    "my bike lock code starts with seven",
    "the library card expires in spring",
    "my sister's flat is on the fourth floor",
    "the car insurance renews through the broker",
    "the garden hose is stored behind the shed",
]


def post_turns(client, user_texts):
    """Post each text as a user message followed by an assistant reply, quickly and with no
    worker: every reply queues a reflection that supersedes the one before."""
    conversation = client.post(
        "/api/v1/conversations", {"subject": "alice", "external_id": "c"}, format="json"
    )
    conversation_id = conversation.json()["id"]
    start = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    for i, text in enumerate(user_texts):
        at = start + timedelta(minutes=2 * i)
        client.post(
            f"/api/v1/conversations/{conversation_id}/messages",
            {"text": text, "occurred_at": at.isoformat()},
            format="json",
        )
        client.post(
            f"/api/v1/conversations/{conversation_id}/responses",
            {"text": "Got it.", "occurred_at": (at + timedelta(minutes=1)).isoformat()},
            format="json",
        )
    return conversation_id


def reflect_the_backlog():
    queued = ReflectionRun.objects.filter(status="queued")
    assert queued.count() == 1  # each reply superseded the run before it
    return turn_reflect(run_id=queued.get().pk)


def test_ten_remember_that_turns_in_a_row_keep_ten_notes(client, subject):
    post_turns(client, [f"Remember that {text}." for text in REMEMBERED])

    stats = reflect_the_backlog()

    assert stats["messages"] == 20
    # a spare key's hiding place and a lock code are credentials: they wait for consent
    pending = PendingMemory.objects.filter(subject=subject).exclude(kind="evidence")
    assert sorted(p.category.slug for p in pending) == ["credentials", "credentials"]
    # and so do the two turns themselves, as evidence
    assert stats["evidence_pending"] == 2
    assert Note.objects.filter(subject=subject, origin="reflection").count() + pending.count() == 10
    assert stats["notes"] + stats["pending"] == 10 and stats["dropped"] == {"facts": 0, "notes": 0}


def test_twenty_four_preference_turns_keep_twenty_four_preferences(client, subject):
    post_turns(client, [f"I love {topic}." for topic in TOPICS])

    stats = reflect_the_backlog()

    kept = ProfileFact.objects.filter(subject=subject, key__startswith="preference.", valid_to=None)
    assert sorted(f.key for f in kept) == sorted(f"preference.{t}" for t in TOPICS)
    assert stats["facts"] == 24


def test_a_cap_that_drops_counts_what_it_dropped_in_the_run_and_in_diagnose(client, subject, actor):
    app_config_set(
        app=subject.app,
        config={"memory": {"reflection": {"maxFactsPerCall": 1, "maxNotesPerCall": 1}}},
        actor=actor,
    )
    # one message, three preferences: the per-message cap keeps one and drops two
    post_turns(
        client, ["I love sushi. I love jazz. I love chess.", "Remember that the boiler is serviced in May."]
    )

    stats = reflect_the_backlog()

    assert ProfileFact.objects.filter(subject=subject, key__startswith="preference.").count() == 1
    assert Note.objects.filter(subject=subject, origin="reflection").count() == 1
    assert stats["dropped"] == {"facts": 2, "notes": 0}
    run = ReflectionRun.objects.get(status="done")
    assert run.stats["dropped"] == {"facts": 2, "notes": 0}
    report = diagnose(subject.app)["reflection"]
    assert report["dropped_by_cap"] == {"facts": 2, "notes": 0}
    assert report["runs_with_drops"] == 1
