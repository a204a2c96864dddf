import pytest
from django.urls import reverse

from tests.factories import ConversationFactory, FactFactory, MessageFactory, NoteFactory

PAGES = [
    "memory_app",
    "memory_subject",
    "memory_profilefact",
    "memory_note",
    "memory_notelink",
    "memory_voteevent",
    "memory_retrievalevent",
    "memory_auditevent",
    "chat_conversation",
    "chat_message",
]


@pytest.mark.parametrize("page", PAGES)
def test_every_admin_changelist_renders_for_staff(admin_client, subject, page):
    NoteFactory(subject=subject)
    FactFactory(subject=subject)
    MessageFactory(conversation=ConversationFactory(subject=subject))

    response = admin_client.get(reverse(f"admin:{page}_changelist"))

    assert response.status_code == 200


def test_the_admin_refuses_people_who_are_not_staff(client, db):
    response = client.get(reverse("admin:memory_note_changelist"))

    assert response.status_code == 302
