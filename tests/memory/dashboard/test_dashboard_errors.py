"""The 403, 404 and 500 pages outside the API: in the site's style, with a way back."""

import pytest
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory
from django.urls import reverse
from django.views.defaults import permission_denied

from memory.api.errors import api_server_error

pytestmark = pytest.mark.django_db


def _styled_with_a_way_back(html: str) -> bool:
    return "css/app.css" in html and f'href="{reverse("dashboard:home")}"' in html


def test_another_persons_page_is_a_styled_404_with_a_way_back(owned_subject, stranger_client):
    response = stranger_client.get(reverse("dashboard:overview", args=[owned_subject.pk]))

    assert response.status_code == 404
    html = response.content.decode()
    assert _styled_with_a_way_back(html) and "Page not found" in html
    assert owned_subject.external_id not in html  # nothing of the other person's memory


def test_an_unknown_page_is_the_same_404(owner_client):
    response = owner_client.get("/no/such/page/")

    assert response.status_code == 404 and _styled_with_a_way_back(response.content.decode())


def test_the_api_keeps_its_json_404(owner_client):
    response = owner_client.get("/api/v1/no-such-endpoint")

    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_a_refusal_is_a_styled_403(owner):
    request = RequestFactory().get("/s/1/overview/")
    request.user = owner
    response = permission_denied(request, PermissionDenied())

    assert response.status_code == 403
    html = response.content.decode()
    assert _styled_with_a_way_back(html) and "Not allowed" in html


def test_a_server_error_is_a_styled_500_that_needs_no_request_context():
    response = api_server_error(RequestFactory().get("/s/1/overview/"))

    assert response.status_code == 500
    html = response.content.decode()
    assert _styled_with_a_way_back(html) and "Something went wrong" in html
