"""The topic working set of a conversation (issue 12, working memory): what it is about now
(active topics) and what it was about and may come back to (parked topics).

`topics_enqueue` asks for a refresh after messages were added (chat/services.py
`messages_add`; the task starts on commit, through the task outbox, so a broker that is down
loses nothing). `topics_refresh` recomputes the set from the conversation's newest messages
alone, never from the rows it wrote before, so a duplicate or late run writes what any other
run over the same messages writes: it is safe to run twice, and a run overtaken by newer
messages is corrected by the refresh those messages queued. memory/working.py renders the rows
as the context's `### topics` section.

Detection is heuristic (no model): the salient words and two-word phrases of each message,
cut with the shared tokenizer (memory/text.py) and the note topic vocabulary
(chat/reflection/topics.py). Something is a topic once the conversation comes back to it: at
least two messages mention it (a question and the reply that takes it up are enough). Words
that keep appearing together join one topic; a broad topic tag ("travel", "work") joins the
topic whose messages it shares, or stands on its own. Weight: each mention counts
`RECENCY_HALF_LIFE`-halving with age in messages, a user's mention twice an assistant's.
The topics mentioned in the newest `topics.parkAfterMessages` messages are active, the
heaviest `topics.maxActive` of them; the others are parked, those mentioned most (then most
recently) first, up to `topics.maxParked`; the rest are dropped.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from chat.reflection.notes import topic_tags
from memory.config import MemoryConfig, get_config
from memory.models import Conversation, ConversationTopic, Message, Role, TopicStatus
from memory.text import FILLER_WORDS, STOPWORDS, TOKEN_RE, stem
from memoryweb.outbox import enqueue

# the newest messages a refresh reads: the working set is about the recent conversation
WINDOW_MESSAGES = 200
RECENCY_HALF_LIFE = 4.0  # messages
ROLE_WEIGHT: dict[str, float] = {Role.USER: 1.0, Role.ASSISTANT: 0.5}
MIN_MENTIONS = 2
# a word joins a topic when at least this share of the messages that mention it mention the topic
JOIN_SHARE = 0.6
MAX_TERMS = 6
# a gap between two tokens that still keeps them in one phrase: spaces, a hyphen, a slash
_PHRASE_GAP = re.compile(r"[ \t\-/]*")

# Words of conversation itself, not of what it is about: asking, helping, judging, time words.
# Neither STOPWORDS (they do find things when searched) nor FILLER_WORDS (they can be values).
CONVERSATION_WORDS = frozenset(
    """able actually add added again ago already always another anyway appreciate around ask asked
    asking awesome back bad best better big certainly change check could cool day days definitely
    different done easy else enough even ever example exactly fine first follow free give glad good
    great guess happy hard help helpful helps here hope idea ideas important instead keep last
    later least less little long look looking lot lots make makes making many maybe mean might
    mind minute minutes month months much must need needed needs never new next nice note noted
    often old one option options part perfect pick plan plans point possible pretty probably put
    question questions quick quite rather ready right said say says see seem seems sense set
    should show since small something sometimes soon sorry sound sounds start still such suggest
    sure take tell thing things think though thought time times today tomorrow tonight tried true
    try trying two use used using usually wait way ways week weeks well whatever without wonder
    wonderful work worked works worry year years yesterday yet""".split()
)


def _salient(token: str) -> bool:
    return (
        len(token) >= 3
        and not token.isdigit()
        and token not in STOPWORDS
        and token not in FILLER_WORDS
        and token not in CONVERSATION_WORDS
    )


def message_phrases(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The salient words of `text` (lower case, in order) and its two-word phrases (adjacent
    salient words with nothing but a space, hyphen or slash between them)."""
    words: list[str] = []
    pairs: list[tuple[str, str]] = []
    previous: re.Match | None = None
    for match in TOKEN_RE.finditer(text.lower()):
        token = match.group(0)
        if not _salient(token):
            previous = None
            continue
        words.append(token)
        if previous is not None and _PHRASE_GAP.fullmatch(text, previous.end(), match.start()):
            pairs.append((previous.group(0), token))
        previous = match
    return words, pairs


@dataclass
class _Candidate:
    key: str  # a stem, "stem stem" for a phrase, "#tag" for a topic tag
    label: str
    terms: list[str]
    seen: set[int] = field(default_factory=set)  # message positions, 0 the oldest of the window


@dataclass(frozen=True)
class DetectedTopic:
    label: str
    terms: list[str]
    status: str
    weight: float
    mentions: int
    first_message_id: int
    last_message_id: int


def _surface(forms: Counter) -> str:
    """The most used spelling of a stem (ties: the shortest, then alphabetical)."""
    return min(forms.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0]


def topics_detect(messages: list[Message], *, config: MemoryConfig) -> list[DetectedTopic]:
    """The active and parked topics of `messages` (oldest first). Pure: the same messages give
    the same topics."""
    messages = [m for m in messages if m.role in ROLE_WEIGHT]
    if not messages:
        return []
    words_seen: dict[str, set[int]] = defaultdict(set)
    word_forms: dict[str, Counter] = defaultdict(Counter)
    pairs_seen: dict[str, set[int]] = defaultdict(set)
    pair_forms: dict[str, Counter] = defaultdict(Counter)
    tags_seen: dict[str, set[int]] = defaultdict(set)
    for position, message in enumerate(messages):
        words, pairs = message_phrases(message.text)
        for word in words:
            words_seen[stem(word)].add(position)
            word_forms[stem(word)][word] += 1
        for first, second in pairs:
            if stem(first) == stem(second):
                continue
            key = f"{stem(first)} {stem(second)}"
            pairs_seen[key].add(position)
            pair_forms[key][f"{first} {second}"] += 1
        for tag in topic_tags(message.text):
            tags_seen[tag].add(position)

    def prominence(seen: set[int]) -> tuple:  # most mentioned, then latest, then earliest
        return (-len(seen), -max(seen), min(seen))

    topics: list[_Candidate] = []
    claimed: set[str] = set()  # stems that belong to a topic already
    for key in sorted(
        (k for k, s in pairs_seen.items() if len(s) >= MIN_MENTIONS),
        key=lambda k: (prominence(pairs_seen[k]), k),
    ):
        first, second = key.split(" ")
        if first in claimed and second in claimed:
            continue
        label = _surface(pair_forms[key])
        topics.append(_Candidate(key, label, label.split(" "), set(pairs_seen[key])))
        claimed.update((first, second))
    recurring = sorted(
        (k for k, s in words_seen.items() if len(s) >= MIN_MENTIONS),
        key=lambda k: (prominence(words_seen[k]), k),
    )
    for key in recurring:
        word = _surface(word_forms[key])
        if not _join(topics, words_seen[key], word, in_label=key in claimed):
            topics.append(_Candidate(key, word, [word], set(words_seen[key])))
        claimed.add(key)
    for tag in sorted(t for t, s in tags_seen.items() if len(s) >= MIN_MENTIONS):
        # a tag is a broad word ("tech"): it joins a topic without becoming one of its terms
        if not _join(topics, tags_seen[tag], tag, in_label=True) and stem(tag) not in claimed:
            topics.append(_Candidate(f"#{tag}", tag, [tag], set(tags_seen[tag])))
    return _rank(_merged(topics), messages, config)


def _merged(topics: list[_Candidate]) -> list[_Candidate]:
    """A topic that shares a word with a topic mentioned more often, and most of whose messages
    that one has, is part of it ("postgres restore" of "postgres"): its words join it."""
    kept: list[_Candidate] = []
    for topic in sorted(topics, key=lambda t: (-len(t.seen), t.label)):
        words = {stem(w) for w in topic.terms}
        host = next(
            (
                k
                for k in kept
                if words & {stem(w) for w in k.terms}
                and len(topic.seen & k.seen) >= JOIN_SHARE * len(topic.seen)
            ),
            None,
        )
        if host is None:
            kept.append(topic)
            continue
        for term in topic.terms:
            if term not in host.terms and len(host.terms) < MAX_TERMS:
                host.terms.append(term)
        host.seen |= topic.seen
    return kept


def _join(topics: list[_Candidate], seen: set[int], term: str, *, in_label: bool) -> bool:
    """Add `term` (mentioned in the messages `seen`) to the topic that shares most of those
    messages, if it shares `JOIN_SHARE` of them; False when none does. `in_label`: a word of a
    phrase topic already, whose mentions count for the topic it joins but which is no new term."""
    best, best_share = None, 0.0
    for topic in topics:
        share = len(seen & topic.seen) / len(seen)
        if share >= JOIN_SHARE and share > best_share:
            best, best_share = topic, share
    if best is None:
        return False
    if not in_label and term not in best.terms and len(best.terms) < MAX_TERMS:
        best.terms.append(term)
    best.seen |= seen
    return True


def _rank(topics: list[_Candidate], messages: list[Message], config: MemoryConfig) -> list[DetectedTopic]:
    newest = len(messages) - 1
    park_after = config["topics.parkAfterMessages"]

    def weight(seen: set[int]) -> float:
        return sum(ROLE_WEIGHT[messages[p].role] * 0.5 ** ((newest - p) / RECENCY_HALF_LIFE) for p in seen)

    scored = sorted(
        ((weight(t.seen), t) for t in topics),
        key=lambda wt: (-wt[0], -max(wt[1].seen), wt[1].label),
    )
    recent = [(w, t) for w, t in scored if newest - max(t.seen) < park_after]
    active = recent[: config["topics.maxActive"]]
    taken = {id(t) for _, t in active}
    # parked: what the conversation came back to most, then what it left last
    rest = sorted(
        (wt for wt in scored if id(wt[1]) not in taken),
        key=lambda wt: (-len(wt[1].seen), -max(wt[1].seen), wt[1].label),
    )
    parked = rest[: config["topics.maxParked"]]
    labels: set[str] = set()
    detected = []
    for status, group in ((TopicStatus.ACTIVE, active), (TopicStatus.PARKED, parked)):
        for w, topic in group:
            label = topic.label[:120]
            if label in labels:
                continue
            labels.add(label)
            detected.append(
                DetectedTopic(
                    label=label,
                    terms=topic.terms,
                    status=status,
                    weight=round(w, 4),
                    mentions=len(topic.seen),
                    first_message_id=messages[min(topic.seen)].pk,
                    last_message_id=messages[max(topic.seen)].pk,
                )
            )
    return detected


def topics_enqueue(*, conversation: Conversation) -> None:
    """Ask for a refresh of the conversation's topics once the current transaction commits
    (nothing when `topics.enabled` is false)."""
    if get_config(conversation.subject.app)["topics.enabled"]:
        enqueue("chat.topics_refresh", conversation.pk)


FIELDS = ("terms", "status", "weight", "mentions", "first_message_id", "last_message_id")


@transaction.atomic
def topics_refresh(*, conversation_id: int) -> dict:
    """Recompute the conversation's ConversationTopic rows from its newest `WINDOW_MESSAGES`
    messages: new topics created, changed ones updated, the ones no longer in the set deleted;
    an unchanged topic is not written. Safe to run twice (the rows depend on the messages
    only); runs of one conversation take turns on its row."""
    conversation = (
        Conversation.objects.select_for_update()
        .select_related("subject__app")
        .filter(pk=conversation_id)
        .first()
    )
    if conversation is None:
        return {"missing": True}
    config = get_config(conversation.subject.app)
    if not config["topics.enabled"]:
        return {"skipped": "topics.enabled is false"}
    newest = Message.objects.filter(conversation=conversation).order_by("-occurred_at", "-id")
    messages = list(reversed(newest.only("id", "role", "text", "occurred_at")[:WINDOW_MESSAGES]))
    detected = {t.label: t for t in topics_detect(messages, config=config)}
    existing = {t.label: t for t in ConversationTopic.objects.filter(conversation=conversation)}
    now = timezone.now()
    stats = {"created": 0, "updated": 0, "deleted": 0, "active": 0, "parked": 0}
    for label, topic in detected.items():
        stats[topic.status] += 1
        row = existing.get(label)
        values = {name: getattr(topic, name) for name in FIELDS}
        if row is None:
            ConversationTopic.objects.create(
                conversation=conversation, label=label, created_at=now, updated_at=now, **values
            )
            stats["created"] += 1
        elif any(getattr(row, name) != value for name, value in values.items()):
            ConversationTopic.objects.filter(pk=row.pk).update(updated_at=now, **values)
            stats["updated"] += 1
    gone = [row.pk for label, row in existing.items() if label not in detected]
    if gone:
        stats["deleted"], _ = ConversationTopic.objects.filter(pk__in=gone).delete()
    return stats
