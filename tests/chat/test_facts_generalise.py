"""Facts from phrasings the first rules never saw: introductions as fragment lists, clauses
without a subject, "my X is Y" frames, and the near misses that must stay silent (another
person's fact, a question, a hedge, a negation). Sentences are invented for these tests."""

from datetime import UTC, datetime

import pytest

from chat.reflection import extract

WED = datetime(2025, 10, 8, 9, 0, tzinfo=UTC)


def facts_of(text: str) -> dict[str, str]:
    return {f.key: f.value for f in extract(text, occurred_at=WED).facts}


GENERALISES = [
    # a self-introduction as a list of fragments
    (
        "hey, Tomasz here - welder for Arup, Leeds-based",
        {"name": "Tomasz", "job_title": "welder", "employer": "Arup", "location": "Leeds"},
    ),
    (
        "Hi! Dr. Lena Voss here, cardiologist at Charité",
        {"name": "Lena Voss", "job_title": "cardiologist", "employer": "Charité"},
    ),
    (
        "about me: Omar, 41, bus driver, live in Coventry",
        {"name": "Omar", "job_title": "bus driver", "location": "Coventry"},
    ),
    ("hello, it's Wen 🙂 optician, Hull", {"name": "Wen", "job_title": "optician", "location": "Hull"}),
    # where a person is from, lives, was born
    ("born in Accra, raised in Leeds", {"birthplace": "Accra", "hometown": "Leeds"}),
    ("Gdansk is home now, after years away", {"location": "Gdansk"}),
    ("grew up in Turin but I've lived in Oslo for six years now", {"hometown": "Turin", "location": "Oslo"}),
    (
        "my new address is 7 Elm Road, Leeds LS6 2AB",
        {"address": "7 Elm Road, Leeds LS6 2AB", "location": "Leeds"},
    ),
    # work and school frames
    ("my boss at Arup wants it by noon", {"employer": "Arup"}),
    ("left the agency in May. Then Google hired me", {"employer": "Google"}),
    ("doing my PhD at Imperial on soil microbes", {"school": "Imperial"}),
    ("graduated from Leeds uni in 2019", {"school": "Leeds uni"}),
    (
        "I bill £60 per hour, working as a self-employed translator",
        {"income": "£60 per hour", "job_title": "self-employed translator"},
    ),
    ("I teach year 3 at a village school", {"job_title": "teacher"}),
    # languages
    (
        "native Polish speaker, English is my second language",
        {"languages": "Polish, English"},
    ),
    ("been on duolingo for french every night", {"languages.learning": "French"}),
    # partner, children, pets
    ("dating this girl Priya for a month now", {"partner": "Priya"}),
    ("the husband and I are off to Rome", {"partner": "husband"}),
    ("three kids - Ana is 7, Rui is 5 and Bo is 2", {"children": "Ana, Rui, Bo"}),
    ("my son starts school in september", {"children": "son"}),
    ("we adopted two puppies last week, Bean and Toast", {"pets": "Bean (dog), Toast (dog)"}),
    ("we rescued a lurcher on sunday, her name is Fig", {"pets": "Fig (dog)"}),
    ("Mango my old tabby sleeps all day", {"pets": "Mango (cat)"}),
    # health and diet
    ("my asthma is playing up again", {"health_conditions": "asthma"}),
    ("20 weeks pregnant and craving lemons", {"health_conditions": "pregnancy"}),
    ("fractured my ankle at football", {"health_conditions": "fractured ankle"}),
    ("doc put me on metformin last month", {"medications": "metformin"}),
    ("allergic to wasps AND latex", {"allergies": "wasps, latex"}),
    ("went vegetarian last year", {"diet": "vegetarian"}),
    ("cut out gluten in spring", {"diet": "gluten-free"}),
    # beliefs and money
    ("as a devout Sikh I cover my hair", {"religion": "Sikh"}),
    ("Green party member since 2015", {"politics": "Green"}),
    ("I make about 70k before tax", {"income": "70k"}),
    # contact details and "my X is Y"
    ("email me at sam.k@example.org", {"email": "sam.k@example.org"}),
    ("my number's 0161 496 0000 for the courier", {"phone": "0161 496 0000"}),
    ("my bday's 14 feb", {"birthday": "February 14"}),  # one form however it is written (birthday_value)
    ("she/her, thanks", {"pronouns": "she/her"}),
    # tools
    ("vim user since college", {"editor": "Vim"}),
    ("mostly rust and go these days", {"programming_languages": "Rust, Go"}),
    ("our stack is Django, Celery and Redis", {"tools": "Django, Celery, Redis"}),
    ("dropped Trello for Linear last spring", {"tools": "Linear"}),
    ("at work it is Jira, Miro and Notion", {"tools": "Jira, Miro, Notion"}),
    ("Go on the server and Swift for the app", {"programming_languages": "Go, Swift"}),
    ("I'm all in on Helix these days", {"editor": "Helix"}),
    # work: fields, trades, students, a stay counted in years
    ("I do recruitment for Capita, it pays the rent", {"job_title": "recruitment", "employer": "Capita"}),
    ("chippy by trade, mostly kitchens", {"job_title": "carpenter"}),
    ("final year history student at Durham Uni", {"school": "Durham Uni"}),
    ("been with Ocado about four years", {"employer": "Ocado"}),
    ("my job's with Siemens, on the rail side", {"employer": "Siemens"}),
    # places: a long stay, a commute, a trade fragment
    ("I've lived in Swansea for five years", {"location": "Swansea"}),
    ("been in Hamburg six months and loving it", {"location": "Hamburg"}),
    ("I commute into Manchester from Stockport", {"location": "Stockport"}),
    ("roofer, self-employed, out of Hull", {"job_title": "roofer", "location": "Hull"}),
    # languages listed by how well
    ("fluent Urdu, decent Arabic and rusty French", {"languages": "Urdu, Arabic, French"}),
    ("I'm bilingual - Welsh and English", {"languages": "Welsh, English"}),
    # family
    ("mum of three, send coffee", {"children": "3"}),
    ("we've been together nine years, his name is Ravi", {"partner": "Ravi"}),
    ("four sons, Ali (12) and the rest", {"children": "Ali"}),
    # health and diet
    ("bad shellfish allergy, so no prawns", {"allergies": "shellfish"}),
    ("a mild egg allergy, nothing dramatic", {"allergies": "eggs"}),
    ("sertraline 50mg daily for my anxiety", {"medications": "sertraline", "health_conditions": "anxiety"}),
    (
        "on lisinopril for my blood pressure",
        {"medications": "lisinopril", "health_conditions": "high blood pressure"},
    ),
    ("osteopath every fortnight for my neck", {"health_conditions": "neck pain"}),
    ("I've got a dodgy knee", {"health_conditions": "knee pain"}),
    ("vegetarian for years but these days I eat fish", {"diet": "pescatarian"}),
    ("I'm on around 38k a year", {"income": "38k a year"}),
    ("favourite film ever is Alien", {"favorite.film": "Alien"}),
    ("we relocated from Cork to Galway in the spring", {"location": "Galway"}),
    ("renting a studio in Lyon for now", {"location": "Lyon"}),
    ("changed careers from lawyer to primary teacher", {"job_title": "primary teacher"}),
    ("doctor switched me, bisoprolol each morning now", {"medications": "bisoprolol"}),
    ("most people call me Kit", {"preferred_name": "Kit"}),
    ("working at Lidl part time, nights mostly", {"employer": "Lidl"}),
    ("I grew up bilingual: Tagalog and English", {"languages": "Tagalog, English"}),
    ("speaking Czech at home with my gran", {"languages": "Czech"}),
]


@pytest.mark.parametrize("text,expected", GENERALISES, ids=[t for t, _ in GENERALISES])
def test_a_general_phrasing_gives_its_fact(text, expected):
    got = facts_of(text)
    assert {k: got.get(k) for k in expected} == expected


NEAR_MISSES = [
    ("Ana, our neighbour, is moving to Spain", "name"),
    ("my sister is 20 weeks pregnant", "health_conditions"),
    ("my friend's address is 12 Oak Street, York", "address"),
    ("my brother is dating this girl called Zoe", "partner"),
    ("my friend's son is starting school", "children"),
    ("my sister got a kitten, her name is Mittens", "pets"),
    ("our old spaniel Rolo died last week, Rolo my best friend", "pets"),
    ("my mum's asthma is bad", "health_conditions"),
    ("ugh my back pain has gone away at last", "health_conditions"),
    ("I'm not pregnant lol", "health_conditions"),
    ("GP might put me on sertraline", "medications"),
    ("my dad is a Labour member", "politics"),
    ("I earn more than my brother", "income"),
    ("email my boss at boss@example.org", "email"),
    ("Google hires lots of people", "employer"),
    ("is she/her ok to use?", "pronouns"),
    ("I'd love to live in Lisbon", "location"),
    ("I basically live in Slack and Jira", "location"),
    ("I start the Monzo job on the 3rd, new role at Monzo", "employer"),
    ("Helo!", "name"),
    # a partner or a pet who died is no partner or pet now
    ("my wife Ruth passed away last March", "partner"),
    ("our cat Tigger died on Sunday", "pets"),
    # a former job, a study course, a short visit, someone else's job, a number word
    ("ex-teacher, now retraining", "job_title"),
    ("third year medic at Leeds", "job_title"),
    ("I was in Seville for two weeks", "location"),
    ("my brother has been at Google for ten years", "employer"),
    ("my dad's GP appointment is about his migraines", "health_conditions"),
    ("my mum has a bad back", "health_conditions"),
    ("I eat fish on Fridays", "diet"),
    ("it is Python's fault honestly", "programming_languages"),
    ("mum to two dogs and a cat", "children"),
    ("we've been friends for five years, her name is Ana", "partner"),
    ("my uncle speaks decent English and rusty German", "languages"),
    ("we moved from Python to Go last year", "location"),
    ("my dad went from plumber to site manager", "job_title"),
    ("I was staying in Rome for the wedding", "location"),
    ("my mum calls me Bobby", "preferred_name"),
    ("my son is speaking French at school", "languages"),
]


def test_a_number_word_is_not_a_typo():
    # "five" is one letter from "live": it must stay a number
    assert facts_of("I've been in Perth for about five years now") == {"location": "Perth"}


@pytest.mark.parametrize("text,key", NEAR_MISSES, ids=[t for t, _ in NEAR_MISSES])
def test_a_near_miss_stays_silent(text, key):
    assert key not in facts_of(text)


def test_a_month_is_not_a_pet_name():
    assert facts_of("we got two kittens in June, Sage and Basil")["pets"] == "Sage (cat), Basil (cat)"
