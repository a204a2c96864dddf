import pytest

from memory.redaction import Redaction, iban_ok, luhn_ok, redact, redact_data

MW_KEY = "mw_0a1b2c3d_" + "Ab3dEfGh1jKlMnOpQrStUvWxYz0123456789-abcdEF"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

# text, expected text after redaction
REDACTS = [
    ("my key is sk-proj-abc123DEF456ghi789JKL012mno", "my key is [REDACTED:openai_key]"),
    ("sk-ant-api03-abcDEF1234567890abcdef123456", "[REDACTED:anthropic_key]"),
    ("id AKIAIOSFODNN7EXAMPLE", "id [REDACTED:aws_access_key_id]"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED:aws_secret_key]",
    ),
    ("token ghp_16C7e42F292c6912E7710c838347Ae178B4a", "token [REDACTED:github_token]"),
    ("gho_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED:github_token]"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github_token]"),
    ("slack: xoxb-123456789012-abcdefghijkl", "slack: [REDACTED:slack_token]"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe_key]"),
    ("restricted rk_live_51H8abcdefGHIJKLmnop", "restricted [REDACTED:stripe_key]"),
    ("maps key AIzaSyD-1234567890abcdefghijklmnopqrstu", "maps key [REDACTED:google_api_key]"),
    (f"session {JWT}", "session [REDACTED:jwt]"),
    ("Authorization: Bearer abc123def456ghi789jkl", "Authorization: Bearer [REDACTED:bearer_token]"),
    ("api_key=abcd1234efgh5678", "api_key=[REDACTED:secret]"),
    ('"client_secret": "9f8e7d6c5b4a3210"', '"client_secret": "[REDACTED:secret]"'),
    ("token: 8a7b6c5d4e3f2a1b", "token: [REDACTED:secret]"),
    ("password: hunter22", "password: [REDACTED:password]"),
    ("my password is sunshine", "my password is [REDACTED:password]"),
    (
        "The wifi password for the cabin is Tr0ub4dor&3, ok?",
        "The wifi password for the cabin is [REDACTED:password], ok?",
    ),
    ("my PIN is 4921.", "my PIN is [REDACTED:password]."),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY----- thanks",
        "[REDACTED:private_key] thanks",
    ),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "[REDACTED:private_key]"),
    ("card 4111 1111 1111 1111 exp 12/25", "card [REDACTED:credit_card] exp 12/25"),
    ("mc 5555-5555-5555-4444", "mc [REDACTED:credit_card]"),
    ("amex 3782 822463 10005", "amex [REDACTED:credit_card]"),
    ("6011111111111117", "[REDACTED:credit_card]"),
    ("IBAN GB82 WEST 1234 5698 7654 32 please", "IBAN [REDACTED:iban] please"),
    ("DE89370400440532013000", "[REDACTED:iban]"),
    ("my SSN is 123-45-6789", "my SSN is [REDACTED:ssn]"),
    (
        "postgres://app:s3cr3t@db.internal:5432/main",
        "postgres://app:[REDACTED:url_password]@db.internal:5432/main",
    ),
    (f"use {MW_KEY} for the sidecar", "use [REDACTED:memoryweb_key] for the sidecar"),
    # a password in a URL, with an empty user or none at all, and with an @ inside it
    ("redis://:Rz9pQ2wX7v@cache:6379/0", "redis://:[REDACTED:url_password]@cache:6379/0"),
    ("broker amqp://:Amq9Pw77@rabbit//", "broker amqp://:[REDACTED:url_password]@rabbit//"),
    ("postgres://user:Pg5ecret9@db/main", "postgres://user:[REDACTED:url_password]@db/main"),
    ("https://user:Ht7pPass@example.com/x", "https://user:[REDACTED:url_password]@example.com/x"),
    (
        "mongodb+srv://u:Mg0P@cluster0.x.net/db",
        "mongodb+srv://u:[REDACTED:url_password]@cluster0.x.net/db",
    ),
    (
        "ftp://bob:p@ss@files.example.com/a?to=x@y.z",
        "ftp://bob:[REDACTED:url_password]@files.example.com/a?to=x@y.z",
    ),
    (
        "the garage door code is 5506 if nobody is in",
        "the garage door code is [REDACTED:access_code] if nobody is in",
    ),
    (
        "the key safe by the shed has combination 0314.",
        "the key safe by the shed has combination [REDACTED:access_code].",
    ),
    ("gate code: 2291", "gate code: [REDACTED:access_code]"),
    ("the wifi for the guests is Maple-Cabin-51 btw", "the wifi for the guests is [REDACTED:password] btw"),
    ("cabin wi-fi password: pinecone77", "cabin wi-fi password: [REDACTED:password]"),
]


@pytest.mark.parametrize(("text", "expected"), REDACTS)
def test_redact_replaces_the_secret_with_a_placeholder(text, expected):
    assert redact(text).text == expected


KEEPS = [
    "I went hiking yesterday and it was lovely.",
    "We met on 2023-05-08 at 13:56 and again on 05/08/2023.",
    "Call me at +1 (415) 555-0132 or 415-555-0132.",
    "order 4111 1111 1111 1112 shipped",  # fails Luhn
    "order 1234567890123 shipped",
    "Your tracking id is 9000000000000001.",  # passes Luhn, but no card starts with 9
    "IBAN-looking GB83 WEST 1234 5698 7654 32 with a bad checksum",
    "I pushed commit 3f786850e387550fdab836ed7e6dc881de23001b to main",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "ISBN 978-3-16-148410-0",
    "I used sk-learn-compatible-estimator-wrapper here",
    "She is the Bearer of bad news",
    "my password is too short",
    "the token: expired",
    "Passwords should be long and unique.",
    "000-12-3456 is not a valid SSN",
    "https://example.com/path?q=1",
    "http://localhost:8000/api and ssh://git@github.com:22/repo",
    "mail bob@example.com via https://host:8443/inbox",
    "I paid $1,234.56 for 3 nights",
    "the job failed with exit code 137 again",
    "the wifi is unreliable in the back room",
    "the door opens inwards, and the area code is 020",
    "our wifi is down since Monday",
]


@pytest.mark.parametrize("text", KEEPS)
def test_redact_leaves_ordinary_text_alone(text):
    assert redact(text) == Redaction(text, 0, ())


def test_redact_counts_every_secret_and_lists_each_kind_once():
    result = redact("password: hunter22 and my password is swordfish, card 4111111111111111")

    assert result.count == 3
    assert result.kinds == ("password", "credit_card")


def test_redact_is_safe_to_run_twice():
    once = redact("api_key=abcd1234efgh5678 Bearer abc123def456ghi789jkl")

    assert redact(once.text) == Redaction(once.text, 0, ())


def test_redact_handles_empty_text():
    assert redact("").count == 0


def test_redact_aws_secret_key_needs_an_aws_hint_nearby():
    bare = "checksum wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

    assert redact(bare).count == 0
    assert redact("AKIAIOSFODNN7EXAMPLE " + bare.split()[1]).kinds == ("aws_access_key_id", "aws_secret_key")


def test_redact_data_redacts_strings_at_any_depth_and_keeps_other_values():
    data = {
        "note": "my password is hunter22",
        "items": [{"text": "card 4111 1111 1111 1111"}, ("tuple", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")],
        "count": 3,
        "ok": True,
    }

    assert redact_data(data) == {
        "note": "my password is [REDACTED:password]",
        "items": [{"text": "card [REDACTED:credit_card]"}, ("tuple", "[REDACTED:stripe_key]")],
        "count": 3,
        "ok": True,
    }


def test_redact_data_blanks_values_under_secret_looking_keys():
    data = {
        "password": "correct horse",
        "db_password": "x",
        "api_key": "short",
        "max_tokens": "100",
        "name": "Sam",
    }

    assert redact_data(data) == {
        "password": "[REDACTED:password]",
        "db_password": "[REDACTED:password]",
        "api_key": "[REDACTED:secret]",
        "max_tokens": "100",
        "name": "Sam",
    }


def test_redact_data_does_not_change_its_input():
    data = {"note": "password: hunter22"}

    redact_data(data)

    assert data == {"note": "password: hunter22"}


@pytest.mark.parametrize(
    ("number", "valid"), [("4111111111111111", True), ("378282246310005", True), ("4111111111111112", False)]
)
def test_luhn_ok(number, valid):
    assert luhn_ok(number) is valid


@pytest.mark.parametrize(
    ("iban", "valid"),
    [
        ("GB82 WEST 1234 5698 7654 32", True),
        ("FR14 2004 1010 0505 0001 3M02 606", True),
        ("GB83 WEST 1234 5698 7654 32", False),
        ("GB82 WEST 1234 5698 7654", False),
        ("ZZ82 WEST 1234 5698 7654 32", False),
    ],
)
def test_iban_ok_checks_country_length_and_checksum(iban, valid):
    assert iban_ok(iban) is valid
