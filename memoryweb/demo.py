"""The seed memory of a fresh demo install, so a newcomer's dashboard is not blank.

Nothing here writes a row by hand: a short conversation is posted through the chat services,
each turn is reflected on by the real extractor (the heuristic one unless a model is
configured), the new notes are linked and a consolidation tick runs, exactly as the worker
would do it. The sensitive message ("allergic to peanuts") lands in the consent queue, since
health defaults to *ask*.

The reflection and link tasks that the services also queue (on commit) find their work done
when the worker picks them up, and skip it: both are safe to run twice.
"""

from datetime import timedelta

from django.utils import timezone

from chat.models import ReflectionRun
from chat.reflect import turn_reflect
from chat.services import messages_add
from chat.summaries.mental_models import mental_models_seed
from chat.summaries.pipeline import summaries_enabled, summaries_run
from consolidation.services import consolidate_now, consolidation_enabled
from memory.config import get_config
from memory.models import Conversation, Note, Subject
from memory.services.audit import Actor
from memory.services.conversations import conversation_get_or_create
from memory.services.links import note_link

DEMO_SUBJECT = "alice"
DEMO_DISPLAY_NAME = "Alice Moreau"
DEMO_CONVERSATION_ID = "demo-welcome"
# the demo app runs the session-summary pipeline too, so its Documents page is not blank
DEMO_APP_CONFIG = {"memory": {"backend": "local"}}

# (user message, assistant reply) per turn, a day apart, ending yesterday
DEMO_TURNS = [
    (
        "Hi! I'm Alice Moreau, but please call me Ali.",
        "Nice to meet you, Ali! What can I help you with today?",
    ),
    (
        "I live in Lisbon. I work as a data engineer at a small fintech.",
        "Lisbon is lovely. Data engineering at a fintech sounds busy, what's your stack like?",
    ),
    (
        "I speak Portuguese and French. I use Linux and VS Code for work.",
        "Good to know, I'll assume Linux when we talk about tooling.",
    ),
    ("I prefer short answers.", "Got it: short answers from now on."),
    (
        "We decided to use Postgres for the billing project instead of MySQL.",
        "Good choice for billing: transactional DDL and solid JSON support.",
    ),
    (
        "Remember that the billing service deploys on Tuesdays after the test suite passes.",
        "Noted: billing deploys on Tuesdays, once the tests are green.",
    ),
    (
        "I'm training for the Lisbon half marathon next spring.",
        "Exciting! How are the long runs going?",
    ),
    (
        "Remember that in marathon training I take an energy gel every 45 minutes on long runs.",
        "Noted: a gel every 45 minutes on long runs.",
    ),
    (
        "Remember that in marathon training I run my long runs early in the morning, before the city heats up.",
        "Smart, Lisbon summers get hot.",
    ),
    (
        "Remember that in marathon training I stretch for ten minutes after long runs.",
        "Good recovery habit. Anything else for race day?",
    ),
    (
        "My sister Inês is visiting next Saturday.",
        "Lovely! Want some ideas for things to do in Lisbon together?",
    ),
    (
        "I'm allergic to peanuts, so no peanut butter bars at the aid stations.",
        "Understood, I'll never suggest peanut snacks.",
    ),
]


def demo_subject_is_empty(subject: Subject) -> bool:
    """True when nothing is held about the subject yet (no facts, notes or conversations)."""
    return not (
        subject.facts.exists()
        or subject.notes.exists()
        or subject.pending.exists()
        or Conversation.objects.filter(subject=subject).exists()
    )


def demo_memory_seed(*, subject: Subject, actor: Actor) -> dict:
    """Post the demo conversation for `subject`, reflect on each turn, link the new notes and
    run one consolidation tick. Returns what was written.

    Writes messages, facts, notes, pending consent items, links, a JobRun and their audit
    events, all through the services. Not meant to be repeated: the caller seeds only an
    empty subject (`demo_subject_is_empty`).
    """

    conversation, _ = conversation_get_or_create(
        subject=subject, external_id=DEMO_CONVERSATION_ID, actor=actor
    )
    start = timezone.now() - timedelta(days=len(DEMO_TURNS))
    for day, (user_text, reply) in enumerate(DEMO_TURNS):
        at = start + timedelta(days=day)
        messages_add(
            conversation=conversation,
            items=[
                {"role": "user", "text": user_text, "occurred_at": at},
                {"role": "assistant", "text": reply, "occurred_at": at + timedelta(seconds=30)},
            ],
            actor=actor,
        )
        # the run the reply queued (already done when tasks run eagerly: then this skips it)
        turn_reflect(run_id=ReflectionRun.objects.filter(conversation=conversation).latest("pk").pk)

    links = 0
    for note_id in Note.objects.filter(subject=subject).order_by("pk").values_list("pk", flat=True):
        links += note_link(note_id=note_id).get("linked", 0)
    job = (
        consolidate_now(subject=subject, actor=actor)
        if consolidation_enabled(get_config(subject.app))
        else None
    )
    summaries = None
    if summaries_enabled(get_config(subject.app)):
        # the conversation ended yesterday, so it is idle: phase 1 and phase 2 run on it now
        mental_models_seed(subject=subject, actor=actor)
        summaries = summaries_run(subject=subject, actor=actor)
    return {
        "messages": 2 * len(DEMO_TURNS),
        "facts": subject.facts.filter(valid_to=None).count(),
        "notes": subject.notes.count(),
        "pending": subject.pending.count(),
        "links": links,
        "lessons": subject.lessons.count(),
        "job_run": job.pk if job else None,
        "summaries_run": summaries.pk if summaries else None,
    }
