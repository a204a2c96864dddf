"""Secret redaction: replace credentials and identifiers with `[REDACTED:<kind>]` before storing.

Runs on everything reflection is about to write. It leans towards low false positives on prose:
card numbers must pass Luhn and start like a card, IBANs must pass mod-97 with their country's
length, AWS secret keys need an AWS hint nearby, and bare hex (git SHAs, checksums) is kept.
Pure Python: no Django, no database (so settings' LOGGING can name RedactingFormatter before
the apps load).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

PLACEHOLDER = "[REDACTED:{kind}]"


@dataclass(frozen=True)
class Redaction:
    text: str
    count: int = 0
    kinds: tuple[str, ...] = field(default_factory=tuple)


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30,
    "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_ok(candidate: str) -> bool:
    iban = re.sub(r"\s+", "", candidate).upper()
    if IBAN_LENGTHS.get(iban[:2]) != len(iban):
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def _iban_prefix(candidate: str) -> int | None:
    """Length of the leading IBAN in `candidate` (the greedy match may run into the next word)."""
    length = IBAN_LENGTHS.get(candidate[:2])
    if length is None:
        return None
    seen = 0
    for index, ch in enumerate(candidate):
        seen += ch != " "
        if seen == length:
            return index + 1 if iban_ok(candidate[: index + 1]) else None
    return None


def _card_ok(candidate: str) -> bool:
    digits = re.sub(r"[ -]", "", candidate)
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_ok(digits)


def _mixed(token: str) -> bool:
    """Random-looking: letters and digits both present (keeps words like sk-learn-style-names)."""
    return bool(re.search(r"\d", token)) and bool(re.search(r"[A-Za-z]", token))


def _aws_secret_ok(token: str) -> bool:
    return bool(re.search(r"[A-Z]", token) and re.search(r"[a-z]", token) and re.search(r"[\d/+]", token))


# Values after "password:" etc. that are words, not secrets.
_NOT_A_SECRET = {
    "a", "an", "the", "is", "was", "not", "too", "very", "so", "still", "weak", "strong", "wrong",
    "correct", "incorrect", "expired", "required", "optional", "missing", "empty", "blank", "same",
    "different", "new", "old", "reset", "changed", "none", "null", "nil", "true", "false", "undefined",
    "hidden", "secret", "set", "unset", "ok", "fine", "long", "short", "easy", "hard", "simple",
    "stored", "saved", "encrypted", "hashed", "there", "here", "my", "your", "their", "our", "it",
    "that", "this", "what", "invalid", "valid", "needed", "protected", "sensitive", "public", "private",
    "generated", "rotated", "revoked", "of", "for", "and", "or", "in", "on", "broken", "bad", "good",
    "great", "terrible", "compromised", "leaked", "stolen", "forgotten", "lost", "shared", "unique",
    "random", "complicated", "complex", "insecure", "secure", "visible", "written", "somewhere",
    "probably", "definitely", "always", "never", "now", "again", "also", "just", "really", "case-sensitive",
}  # fmt: skip


def _value_ok(value: str) -> bool:
    bare = value.strip("\"'`“”‘’").rstrip(".,;:!?)")
    if len(bare) < 4 and not re.search(r"\d", bare):
        return False
    if bare.lower() in _NOT_A_SECRET or bare.startswith(("[REDACTED", "<", "${", "{{", "***", "xxx")):
        return False
    return len(bare) >= 3


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0  # the part of the match that is replaced
    check: Callable[[str], bool] | None = None
    trim: Callable[[str], int | None] | None = None  # how much of the value is the secret


def _rule(
    kind: str,
    pattern: str,
    group: int | str = 0,
    check: Callable[[str], bool] | None = None,
    flags: int = 0,
    trim: Callable[[str], int | None] | None = None,
) -> _Rule:
    return _Rule(kind, re.compile(pattern, flags), group, check, trim)


_I = re.IGNORECASE
_KEY_WORDS = r"api[_-]?key|apikey|access[_-]?key|secret[_-]?key|client[_-]?secret|secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|token"
_PASSWORD_WORDS = r"password|passwd|passphrase|passcode|pwd|pin"

# Order matters: specific formats first, so a Stripe key is a stripe_key and not a generic token.
RULES: list[_Rule] = [
    _rule(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        flags=re.DOTALL,
    ),
    _rule("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", check=_mixed),
    _rule("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", check=_mixed),
    _rule("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b"),
    _rule("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}\b"),
    _rule("slack_token", r"\bxox[baprs]-[A-Za-z0-9-]{10,}"),
    _rule("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    _rule("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    _rule(
        "aws_secret_key",
        r"(?:aws|secret|AKIA\w{16}|REDACTED:aws_access_key_id\])[^\n]{0,60}?(?<![A-Za-z0-9/+])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        group="v",
        check=_aws_secret_ok,
        flags=_I,
    ),
    _rule("memoryweb_key", r"\bmw_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"),
    # user:password@ in a URL's authority; the user may be empty (redis://:pw@host), and an
    # unencoded @ inside the password belongs to it (the last @ before the host ends it)
    _rule("url_password", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<v>[^\s/?#]+)@", group="v", flags=_I),
    _rule("bearer_token", r"\bBearer\s+(?P<v>[A-Za-z0-9._~+/=-]{16,})", group="v", check=_mixed, flags=_I),
    _rule(
        "password",
        rf"\b(?:{_PASSWORD_WORDS})\b[\"']?\s*(?:[:=]|=>)\s*[\"']?(?P<v>[^\s\"',;]+)",
        group="v",
        check=_value_ok,
        flags=_I,
    ),
    _rule(
        "password",
        rf"\b(?:{_PASSWORD_WORDS})\b(?:\s+(?:for|to|on|of)\s+(?:the\s+|my\s+)?[\w .'-]{{1,30}}?)?\s+(?:is|was|will be|=)\s+[\"'“]?(?P<v>[^\s\"'”]+?)[\"'”]?(?=[\s,;!?]|[.](?:\s|$)|$)",
        group="v",
        check=_value_ok,
        flags=_I,
    ),
    _rule(
        "secret",
        rf"\b(?:{_KEY_WORDS})\b[\"']?\s*(?:[:=]|=>)\s*[\"']?(?P<v>[A-Za-z0-9._~+/=-]{{8,}})",
        group="v",
        check=_value_ok,
        flags=_I,
    ),
    _rule(
        "private_key",
        r"\b(?:private key|seed phrase|recovery phrase|mnemonic)\s+(?:is|:)\s+(?P<v>(?:[a-z]+\s+){11,23}[a-z]+)",
        group="v",
        flags=_I,
    ),
    # a door, gate, lockbox or alarm code said in passing ("the lockbox has code 4417")
    _rule(
        "access_code",
        r"\b(?:door|gate|lock ?box|key ?safe|keypad|alarm|garage|padlock|entry|building|intercom|safe)\b"
        r"(?:\s+[\w-]+){0,4}?\s+(?:code|combination|combo|pin)\b\s*(?:is|was|:|=)?\s*[\"'“]?(?P<v>\d{3,10})\b",
        group="v",
        flags=_I,
    ),
    # a Wi-Fi network's password given as "the wifi (for the guests) is Maple-Cabin-51"
    _rule(
        "password",
        r"\bwi-?fi\b(?:\s+(?:password|pass|key|code))?[^.\n:=]{0,30}?\s(?:is|:|=)\s+[\"'“]?(?P<v>[^\s\"'”,;]{6,}?)[\"'”]?(?=[\s,;!?]|[.](?:\s|$)|$)",
        group="v",
        check=lambda v: _value_ok(v) and bool(re.search(r"\d|[-_!@#$%*]|[a-z][A-Z]", v)),
        flags=_I,
    ),
    _rule("iban", r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b", trim=_iban_prefix),
    _rule(
        "credit_card",
        r"(?<![\d-])(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{1,3})?|\d{4}([ -])\d{6}\2\d{4,5})(?![\d-])",
        check=_card_ok,
    ),
    _rule("ssn", r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])"),
]


def _apply(rule: _Rule, text: str, found: list[str]) -> str:
    def replace(m: re.Match[str]) -> str:
        start, end = m.span(rule.group)
        value = m.group(rule.group)
        if "REDACTED" in value or (rule.check and not rule.check(value)):
            return m.group(0)
        if rule.trim:
            length = rule.trim(value)
            if length is None:
                return m.group(0)
            end = start + length
        found.append(rule.kind)
        offset = m.start()
        whole = m.group(0)
        return whole[: start - offset] + PLACEHOLDER.format(kind=rule.kind) + whole[end - offset :]

    return rule.pattern.sub(replace, text)


def redact(text: str) -> Redaction:
    """Replace secrets in `text`; safe to repeat (placeholders are never redacted again)."""
    if not text:
        return Redaction(text or "")
    found: list[str] = []
    for rule in RULES:
        text = _apply(rule, text, found)
    return Redaction(text, len(found), tuple(dict.fromkeys(found)))


_SECRET_KEYS = re.compile(
    rf"^(?:.*[_-])?(?:{_KEY_WORDS}|{_PASSWORD_WORDS}|credentials?|private[_-]?key)$", _I
)


def redact_data(obj: Any) -> Any:
    """A copy of `obj` (dicts, lists, tuples, strings) with every string redacted.

    A string value under a key that names a secret ("password", "api_key", "auth_token") is
    replaced whole, whatever it looks like.
    """
    return redact_data_counted(obj)[0]


def redact_data_counted(obj: Any) -> tuple[Any, int]:
    """`redact_data(obj)` and how many secrets it removed."""
    removed = 0

    def walk(value: Any, key: Any = None) -> Any:
        nonlocal removed
        if isinstance(value, str):
            if (
                value
                and isinstance(key, str)
                and _SECRET_KEYS.match(key)
                and not value.startswith("[REDACTED")
            ):
                removed += 1
                return PLACEHOLDER.format(
                    kind="password" if re.search(_PASSWORD_WORDS, key, _I) else "secret"
                )
            result = redact(value)
            removed += result.count
            return result.text
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(walk(item) for item in value)
        return value

    return walk(obj), removed


# a query string inside a log line: `?a=1&b=2` up to the next space or quote
_QUERY_IN_LINE = re.compile(r"\?(?P<q>[^\s\"'<>]+)")


def redact_query_string(query: str) -> str:
    """An URL-encoded query string with every value redacted as it reads once decoded (a
    `redis%3A%2F%2F%3Apw%40host` is a URL with a password). Unchanged when nothing was found."""
    pairs = parse_qsl(query, keep_blank_values=True)
    redacted, removed = redact_data_counted([{key: value} for key, value in pairs])
    if not removed:
        return query
    return urlencode([next(iter(pair.items())) for pair in redacted], safe=":/[]")


class RedactingFormatter(logging.Formatter):
    """A log formatter whose lines carry no secrets: query strings are redacted as decoded
    values, then the whole line (message and traceback) as text. Every handler in settings'
    LOGGING uses it, so an access line or an error can never write a secret a request held."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        line = _QUERY_IN_LINE.sub(lambda m: "?" + redact_query_string(m.group("q")), line)
        return redact(line).text
