"""Consent categories (DESIGN §3): which sensitive kind of personal data a text is about.

The slugs match the ConsentCategory rows seeded by the data migration. One text gets one
category: the most sensitive one it mentions, in CATEGORY_PRIORITY order.
"""

from __future__ import annotations

import re

CATEGORY_PRIORITY = (
    "credentials",
    "government_ids",
    "health",
    "sexual_life",
    "minors",
    "finances",
    "religion",
    "politics",
    "precise_location",
    "relationships",
)

_WORDS: dict[str, str] = {
    "credentials": r"passwords?|passcodes?|passphrases?|pin code|pin number|my pin|api[ _-]?keys?|access tokens?|"
    r"auth tokens?|secret keys?|private keys?|ssh keys?|2fa|recovery codes?|seed phrase|login details|"
    r"credentials|\[REDACTED:(?!credit_card|iban|ssn)\w+\]",
    "government_ids": r"ssn|social security(?: number)?|passport (?:number|no\.?)|national id|id number|"
    r"driver'?s licen[cs]e(?: number)?|tax id|tin number|nino|national insurance number|visa number|"
    r"green card|residence permit|\d{3}-\d{2}-\d{4}|\[REDACTED:ssn\]",
    "health": r"allerg\w*|asthma\w*|diabet\w*|adhd|autis\w*|anxiety|depress\w*|ptsd|ocd|bipolar|"
    r"schizophreni\w*|epilep\w*|migraines?|cancer|tumou?r|chemo\w*|diagnos\w*|therap(?:y|ist)|"
    r"psychiatr\w*|medication|meds|prescri\w*|surgery|hospital\w*|doctor|dentist|clinic|illness|"
    r"disease|disorder|syndrome|chronic|pregnan\w*|expecting a baby|miscarriage|ivf|infertil\w*|"
    r"intoleran\w*|celiac|coeliac|crohn'?s|ibs|arthritis|hiv|sexually transmitted|covid|injur\w*|broke my (?:arm|leg|wrist|ankle|foot|hand|finger|toe|nose|ribs?|collarbone|back|neck|hip)|"
    r"sprained|fracture\w*|rehab|sober|sobriety|addict\w*|eating disorder|anorexi\w*|bulimi\w*|"
    r"insulin|blood pressure|hypertension|sertraline|prozac|zoloft|lexapro|adderall|ritalin|"
    r"antidepressants?|mental health|panic attacks?|suicid\w*|self[- ]harm|wheelchair|disabilit\w*",
    "sexual_life": r"gay|lesbian|bisexual|queer|lgbtq?\+?|homosexual|heterosexual|asexual|"
    r"pansexual|transgender|trans (?:man|woman)|non-binary|com(?:e|ing) out (?:as|to)|came out (?:as|to)|sex life|sexual\w*|"
    r"hook(?:ed)? up|one-night stand|kink\w*|libido|erectile|contracepti\w*|condoms?|birth control",
    "minors": r"kids?|child(?:ren)?|sons?|daughters?|toddler|baby|babies|infant|teen(?:ager)?s?|"
    r"kindergarten|preschool|elementary school|primary school|daycare|nursery|my boy|my girl|"
    r"\d{1,2}[- ]year[- ]old|stepson|stepdaughter|grandson|granddaughter",
    "finances": r"salary|income|earn(?:s|ing)?|paid \$?\d|debt|loans?|mortgage|credit score|bank account|"
    r"savings|invest\w*|stocks?|crypto|bitcoin|401k|pension|bankrupt\w*|tax(?:es)? return|"
    r"rent is|net worth|budget|(?:i'm|am|so|flat) broke|overdraft|iban|credit card|[$€£]\s?\d[\d,.]*k?|"
    r"\d+k a year|\[REDACTED:(?:credit_card|iban)\]",
    "religion": r"muslim|islam\w*|christian\w*|catholic\w*|protestant|jewish|judaism|hindu\w*|buddhis\w*|"
    r"sikh\w*|mormon|atheis\w*|agnostic|church|mosque|synagogue|temple|pray\w*|bible|quran|koran|"
    r"torah|ramadan|halal|kosher|sabbath|shabbat|baptis\w*|faith|religio\w*|spiritual",
    "politics": r"vot(?:e|ed|ing|er)|election|democrats?|republicans?|labou?r party|tory|tories|"
    r"conservatives?|liberals?|socialis\w*|communis\w*|libertarian|progressives?|left[- ]wing|"
    r"right[- ]wing|political|politics|greens\b|green party|union member|protest\w*|activis\w*|maga|"
    r"trump|biden|parliament|senator|congress\w*",
    "precise_location": r"home address|my address|apartment \d+|"
    r"apt\.? \d+|flat \d+|zip code|postcode|post code|gps|coordinates|latitude|longitude|"
    r"\d{1,3}\.\d{4,},\s*-?\d{1,3}\.\d{4,}",
    "relationships": r"wife|husband|spouse|partner|girlfriend|boyfriend|gf|bf|fianc[ée]e?|married|"
    r"marriage|divorc\w*|separated|dating|date night|breakup|broke up|my ex|ex-wife|ex-husband|"
    r"affair|cheat(?:ed|ing) on|wedding|engaged|tinder|hinge|bumble|crush on|in love",
}
_PATTERNS = {
    slug: re.compile(rf"(?<![\w-])(?:{words})(?![\w])", re.IGNORECASE) for slug, words in _WORDS.items()
}
# Street addresses need their capital letters, or "a 10 minute drive" would be an address.
_STREET = re.compile(
    r"\b\d+[A-Za-z]?\s+(?:[A-Z][\w'-]*\s+){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|"
    r"Boulevard|Blvd|Way|Court|Ct|Place|Pl|Terrace|Close|Square|Sq)\b"
)

# What a fact's key says about its category, whatever the words in the value.
KEY_CATEGORIES = {
    "allergies": "health",
    "health_conditions": "health",
    "medications": "health",
    "partner": "relationships",
    "children": "minors",
    "religion": "religion",
    "politics": "politics",
    "address": "precise_location",
    "income": "finances",
}


def classify_category(text: str) -> str:
    """The consent category slug for `text`, or "" when it mentions nothing sensitive."""
    if not text:
        return ""
    for slug in CATEGORY_PRIORITY:
        if _PATTERNS[slug].search(text) or (slug == "precise_location" and _STREET.search(text)):
            return slug
    return ""


def fact_category(key: str, value: str) -> str:
    """The category of a fact: its key's category, escalated by what the value itself says."""
    by_key = KEY_CATEGORIES.get(key.split(".")[0], "")
    by_value = classify_category(value)
    if key == "diet" and value.lower() in ("halal", "kosher"):
        by_value = "religion"
    candidates = [c for c in (by_key, by_value) if c]
    return min(candidates, key=CATEGORY_PRIORITY.index) if candidates else ""
