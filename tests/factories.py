from datetime import timedelta

import factory
from django.utils import timezone

from memory.models import App, Conversation, Message, Note, NoteVersion, ProfileFact, Subject


class AppFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = App

    name = factory.Sequence(lambda n: f"app-{n}")


class SubjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subject

    app = factory.SubFactory(AppFactory)
    external_id = factory.Sequence(lambda n: f"user-{n}")


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Conversation

    subject = factory.SubFactory(SubjectFactory)
    external_id = factory.Sequence(lambda n: f"conv-{n}")


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    conversation = factory.SubFactory(ConversationFactory)
    role = "user"
    text = factory.Faker("sentence")
    occurred_at = factory.LazyFunction(timezone.now)


class FactFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ProfileFact

    subject = factory.SubFactory(SubjectFactory)
    key = factory.Sequence(lambda n: f"key{n}")
    value = "value"


class NoteFactory(factory.django.DjangoModelFactory):
    """A note written straight to the table (FTS triggers index it); use the service to test storing."""

    class Meta:
        model = Note
        skip_postgeneration_save = True

    subject = factory.SubFactory(SubjectFactory)
    content = factory.Faker("sentence")
    tags = factory.LazyFunction(list)

    @factory.post_generation
    def first_version(obj, create, extracted, **kwargs):
        if create:
            NoteVersion.objects.create(note=obj, version=1, content=obj.content, tags=obj.tags)


def extraction_for(subject, *, scope="", title="t", synopsis="", raw_memory="", days_ago=0, **conversation):
    """A new conversation of `subject` with one message `days_ago` days old, and its session
    extraction (written by the service, so redacted like the pipeline's)."""
    from memory.services.documents import session_extraction_write

    conversation_row = ConversationFactory(subject=subject, scope=scope, **conversation)
    at = timezone.now() - timedelta(days=days_ago)
    message = MessageFactory(conversation=conversation_row, occurred_at=at)
    return session_extraction_write(
        conversation=conversation_row,
        watermark_message_id=message.pk,
        message_count=1,
        last_message_at=at,
        title=title,
        synopsis=synopsis,
        raw_memory=raw_memory,
        method="heuristic",
    )
