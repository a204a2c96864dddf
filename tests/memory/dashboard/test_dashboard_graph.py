"""Dashboard: the link graph page and its JSON endpoint."""

import json

from django.urls import reverse
from django.utils import timezone

from memory.models import NoteLink
from memory.selectors import note_graph
from tests.factories import NoteFactory


def link(src, dst, kind="related", weight=0.5):
    return NoteLink.objects.create(src=src, dst=dst, kind=kind, weight=weight)


def data_url(subject):
    return reverse("dashboard:graph_data", args=[subject.pk])


def page_url(subject):
    return reverse("dashboard:graph", args=[subject.pk])


def test_the_endpoint_answers_the_subjects_notes_and_typed_links(owned_subject, owner_client):
    a = NoteFactory(
        subject=owned_subject, content="Alice trains for the Lisbon half marathon", tags=["running"]
    )
    b = NoteFactory(subject=owned_subject, content="Alice runs on Sundays", tags=["running"])
    c = NoteFactory(subject=owned_subject, content="Alice stopped running on Sundays")
    link(a, b, "same_topic", 0.61)
    link(c, b, "contradicts", 0.7)
    response = owner_client.get(data_url(owned_subject))
    data = response.json()
    assert response.status_code == 200
    assert {n["id"] for n in data["nodes"]} == {a.pk, b.pk, c.pk}
    by_id = {n["id"]: n for n in data["nodes"]}
    assert by_id[b.pk]["degree"] == 2
    assert by_id[a.pk]["url"] == reverse("dashboard:note_detail", args=[owned_subject.pk, a.pk])
    assert by_id[a.pk]["tags"] == ["running"]
    edges = {(e["source"], e["target"], e["kind"], e["weight"]) for e in data["edges"]}
    assert edges == {(a.pk, b.pk, "same_topic", 0.61), (c.pk, b.pk, "contradicts", 0.7)}
    assert data["summary"]["total_edges"] == 2
    assert data["summary"]["capped"] is False


def test_a_big_graph_is_capped_at_the_most_linked_notes_and_says_so(owned_subject, owner_client):
    hub = NoteFactory(subject=owned_subject, content="hub note")
    spokes = [NoteFactory(subject=owned_subject, content=f"spoke {i}") for i in range(12)]
    for spoke in spokes:
        link(spoke, hub)
    second = NoteFactory(subject=owned_subject, content="second hub")
    for spoke in spokes[:3]:
        link(second, spoke)
    response = owner_client.get(data_url(owned_subject), {"limit": 10})
    data = response.json()
    ids = [n["id"] for n in data["nodes"]]
    assert len(ids) == 10
    assert hub.pk in ids and second.pk in ids and spokes[0].pk in ids  # degrees 12, 3, 2
    assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])
    assert data["summary"]["capped"] is True
    assert "Showing the 10 most-linked notes" in data["summary"]["text"]
    assert data["summary"]["total_notes"] == 14


def test_centring_on_a_note_shows_its_neighbourhood_only(owned_subject, owner_client):
    a, b, c, d, far = (NoteFactory(subject=owned_subject, content=f"note {i}") for i in range(5))
    link(a, b)
    link(b, c)
    link(c, d)
    link(d, far)
    data = owner_client.get(data_url(owned_subject), {"focus": a.pk}).json()
    assert {n["id"] for n in data["nodes"]} == {a.pk, b.pk, c.pk}  # two hops by default
    assert [n["id"] for n in data["nodes"] if n["focus"]] == [a.pk]
    assert data["summary"]["focus"] == a.pk
    assert f"Note n:{a.pk}" in data["summary"]["text"]


def test_archived_notes_are_left_out_unless_asked_for(owned_subject, owner_client):
    live = NoteFactory(subject=owned_subject, content="live")
    archived = NoteFactory(subject=owned_subject, content="archived", archived_at=timezone.now())
    link(live, archived)
    without = owner_client.get(data_url(owned_subject)).json()
    with_archived = owner_client.get(data_url(owned_subject), {"archived": "on"}).json()
    assert {n["id"] for n in without["nodes"]} == {live.pk}
    assert without["edges"] == []
    assert {n["id"] for n in with_archived["nodes"]} == {live.pk, archived.pk}
    assert [n["archived"] for n in with_archived["nodes"] if n["id"] == archived.pk] == [True]


def test_a_bad_limit_is_a_400_naming_the_field(owned_subject, owner_client):
    response = owner_client.get(data_url(owned_subject), {"limit": "9999"})
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "limit"


def test_centring_on_another_subjects_note_is_a_404(owned_subject, stranger_subject, owner_client):
    theirs = NoteFactory(subject=stranger_subject, content="Bob's secret")
    assert owner_client.get(data_url(owned_subject), {"focus": theirs.pk}).status_code == 404
    assert owner_client.get(page_url(owned_subject), {"focus": theirs.pk}).status_code == 404


def test_another_persons_graph_is_a_404(owned_subject, stranger_client):
    NoteFactory(subject=owned_subject, content="Alice's note")
    assert stranger_client.get(data_url(owned_subject)).status_code == 404
    assert stranger_client.get(page_url(owned_subject)).status_code == 404


def test_staff_see_any_subjects_graph(owned_subject, staff_client):
    note = NoteFactory(subject=owned_subject, content="Alice's note")
    data = staff_client.get(data_url(owned_subject)).json()
    assert [n["id"] for n in data["nodes"]] == [note.pk]


def test_the_graph_never_includes_another_subjects_notes(owned_subject, stranger_subject, owner_client):
    mine = NoteFactory(subject=owned_subject, content="mine")
    theirs = NoteFactory(subject=stranger_subject, content="theirs")
    other = NoteFactory(subject=stranger_subject, content="theirs too")
    link(theirs, other)
    data = owner_client.get(data_url(owned_subject)).json()
    assert [n["id"] for n in data["nodes"]] == [mine.pk]
    assert data["edges"] == []


def test_the_page_embeds_the_first_drawing_and_lists_the_hubs(owned_subject, owner_client):
    hub = NoteFactory(subject=owned_subject, content="Alice's running plan")
    for i in range(3):
        link(NoteFactory(subject=owned_subject, content=f"run {i}"), hub, "elaborates")
    response = owner_client.get(page_url(owned_subject))
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="graph-initial"' in body
    assert "vendor/cytoscape-3.35.0/cytoscape.min.js" in body
    embedded = json.loads(body.split('id="graph-initial" type="application/json">')[1].split("</script>")[0])
    assert len(embedded["nodes"]) == 4
    assert response.context["hubs"][0]["id"] == hub.pk
    assert "4 notes, 4 of them linked, 3 links." in body


def test_an_empty_graph_page_says_where_notes_come_from(owned_subject, owner_client):
    response = owner_client.get(page_url(owned_subject))
    assert b"No notes yet." in response.content
    assert b'id="graph-initial"' not in response.content


def test_notes_without_links_are_drawn_with_a_word_on_why(owned_subject, owner_client):
    NoteFactory(subject=owned_subject, content="lonely note")
    response = owner_client.get(page_url(owned_subject))
    assert b"None of these notes is linked yet." in response.content


def test_the_page_shows_a_bad_parameter_as_a_400(owned_subject, owner_client):
    response = owner_client.get(page_url(owned_subject), {"limit": "lots"})
    assert response.status_code == 400
    assert b'data-field="limit"' in response.content


def test_the_selector_caps_the_focus_neighbourhood(subject):
    centre = NoteFactory(subject=subject, content="centre")
    for i in range(15):
        link(centre, NoteFactory(subject=subject, content=f"leaf {i}"))
    graph = note_graph(subject=subject, focus=centre, limit=10)
    assert len(graph["nodes"]) == 10
    assert graph["nodes"][0]["id"] == centre.pk
    assert graph["capped"] is True


def test_centring_on_an_archived_note_shows_its_archived_cluster(owned_subject, owner_client):
    now = timezone.now()
    a, b = (NoteFactory(subject=owned_subject, content=f"archived {i}", archived_at=now) for i in range(2))
    live = NoteFactory(subject=owned_subject, content="live")
    link(a, b)
    data = owner_client.get(data_url(owned_subject), {"focus": a.pk}).json()
    assert {n["id"] for n in data["nodes"]} == {a.pk, b.pk}
    assert data["summary"]["archived"] is True
    assert live.pk not in {n["id"] for n in data["nodes"]}
