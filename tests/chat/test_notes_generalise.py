"""Notes, retractions and note dates on phrasings of our own (none taken from the labelled set):
each case stands for a kind of phrasing — a dropped subject, a thing given up, a breakup, a
restated agreement, a recurring day — rather than for one sentence."""

from datetime import UTC, date, datetime

import pytest

from chat.reflection.heuristics import extract

# a Wednesday
REFERENCE = datetime(2025, 6, 11, 12, 0, tzinfo=UTC)


def _retracted(text: str) -> set[tuple[str, str]]:
    return {(r.key, r.value.lower()) for r in extract(text, occurred_at=REFERENCE).retractions}


def _notes(text: str, role: str = "user") -> list[tuple[str, date | None]]:
    return [
        (n.tags[0], n.occurred_at.date() if n.occurred_at else None)
        for n in extract(text, role=role, occurred_at=REFERENCE).notes
    ]


@pytest.mark.parametrize(
    ("text", "retraction"),
    [
        # a thing given up, read in whichever frame a fact rule knows
        ("dropped Asana for good, it was slowing everyone down", ("tools", "asana")),
        ("finally ditched paleo, I missed pasta too much", ("diet", "paleo")),
        ("gave up on Italian after a month, too busy", ("languages.learning", "italian")),
        ("I'm done with Trello, everything lives in Linear now", ("tools", "trello")),
        ("no more Perl, the whole codebase is Go now", ("programming_languages", "perl")),
        ("cancelled my Green party membership last week", ("politics", "green")),
        ("stepped down as head chef in April, I needed my evenings back", ("job_title", "head chef")),
        ("left the Baptist church years ago", ("religion", "baptist")),
        ("ex-Methodist, not much of anything now", ("religion", "methodist")),
        # "not … these days" is "not … anymore"
        ("I don't use Slack these days, our team moved to Discord", ("tools", "slack")),
        # moves told with "from"
        ("relocated to Porto from Madrid last autumn", ("location", "madrid")),
        # jobs lost
        ("lost my job at Barclays in the spring", ("employer", "barclays")),
        ("no longer at Canva, the contract ended", ("employer", "canva")),
        ("Quit Deliveroo in January and took the summer off", ("employer", "deliveroo")),
        # breakups name the partner
        ("Lena and I separated in the spring, it was mutual", ("partner", "lena")),
        ("my ex-husband Ravi picks the kids up on Fridays", ("partner", "ravi")),
        ("broke up with Sam last night", ("partner", "sam")),
        # pets that died or were given away; breeds are dogs
        ("Bruno, our beagle, died on Saturday", ("pets", "bruno (dog)")),
        ("Tigger had to be put to sleep last week, such a good cat", ("pets", "tigger (cat)")),
        ("re-homed our hamsters, Nib and Dot, the baby is allergic", ("pets", "nib (hamster)")),
        # back to an old diet after years without it
        ("having fish again after two years vegan", ("diet", "vegan")),
        # a switch retracts the old value of a single-valued key too
        ("switched from Emacs to Helix in March", ("editor", "emacs")),
    ],
)
def test_a_change_in_any_phrasing_retracts_the_old_state(text, retraction):
    assert retraction in _retracted(text) or (retraction[0], retraction[1].split(" (")[0]) in {
        (k, v.split(" (")[0]) for k, v in _retracted(text)
    }


@pytest.mark.parametrize(
    "text",
    [
        "my brother quit his job at Google last week",
        "what would happen if I gave up coffee",
        "I could never give up cheese",
        "maybe I'll quit Twitter at some point",
        "do you think we should split up",
    ],
)
def test_someone_elses_change_a_question_or_a_hedge_retracts_nothing(text):
    assert _retracted(text) == set()


@pytest.mark.parametrize(
    ("text", "kind", "day"),
    [
        # commitments in any phrasing
        ("plan is to hit the gym three times a week from Monday", "plan", date(2025, 6, 16)),
        ("the board's going to wind down the Leeds office next quarter", "decision", None),
        ("we have promised our nephews an aquarium outing at Halloween", "decision", date(2025, 10, 31)),
        ("our plan is that I take Fridays off once the mortgage is cleared", "decision", None),
        ("finance signed off, so the team approved the new laptops", "decision", None),
        ("we're doing a cruise along the Danube this summer", "plan", date(2025, 6, 1)),
        ("registered for the Berlin half in April, send help", "plan", date(2026, 4, 1)),
        ("I've committed to daily push-ups in July", "plan", date(2025, 7, 1)),
        # appointments without a verb
        ("dentist on the 3rd, not looking forward to it", "plan", date(2025, 7, 3)),
        ("physio Thursday at 5, straight after work", "plan", date(2025, 6, 12)),
        # dropped subjects told in the past
        ("finally divorced as of last week, strange feeling", "event", date(2025, 6, 2)),
        ("flew back from Tokyo last Tuesday", "event", date(2025, 6, 10)),
        ("favourite singer is Björk, met her at a gig in 2019", "event", date(2019, 1, 1)),
        # the most precise mention dates the note
        ("the move was last year; began the new meds three weeks back", "event", date(2025, 5, 21)),
        # things to keep
        ("gate code is 4471 - don't let me forget", "remembered", None),
        ("bike lock combo 0923, just in case I forget", "remembered", None),
    ],
)
def test_plans_decisions_events_and_things_to_keep_in_many_phrasings(text, kind, day):
    notes = _notes(text)
    assert notes and notes[0][0] == kind, notes
    if day is not None:
        assert notes[0][1] is not None and notes[0][1].isoformat()[:7] == day.isoformat()[:7]
        if kind != "decision" and day.day != 1:
            assert notes[0][1] == day


def test_a_story_sentence_about_a_month_is_an_event_dated_in_the_past():
    notes = _notes("Left my old flat in February. April was mostly sailing off Crete. Then I started at Arup")
    assert ("event", date(2025, 4, 1)) in notes


def test_a_named_pet_put_to_sleep_is_an_event_of_yesterday():
    assert _notes("Pepper was put to sleep yesterday, sixteen years old, best dog ever") == [
        ("event", date(2025, 6, 10))
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Perfect, so we'll release version two on 24 June as you suggested.",
        "Agreed: we'll hold the sync at eleven starting in July.",
    ],
)
def test_an_assistant_restating_an_agreement_is_a_decision(text):
    assert [kind for kind, _ in _notes(text, role="assistant")] == ["decision"]


def test_an_assistant_proposing_is_not_a_decision():
    assert _notes("We could move the standup to 10am if you like.", role="assistant") == []


@pytest.mark.parametrize(
    "text",
    [
        "I'll sleep on it over the weekend",
        "what happens to my pension if I resign from the firm in autumn?",
        "supposing we relocated to Graz in October, is a permit needed",
        "would you ever try a juice cleanse?",
        "how did the gig go for you",
        "cheers, nothing else from me",
    ],
)
def test_talk_questions_and_hypotheticals_stay_silent(text):
    assert _notes(text) == [] and _retracted(text) == set()


def test_a_recurring_weekday_does_not_date_the_note():
    notes = _notes("we're going to do code reviews every other Friday starting next month")
    assert notes == [("decision", date(2025, 7, 1))]


def test_asking_advice_about_someone_is_not_a_note_about_them():
    assert _notes("my brother might be moving to Oslo, how do I help him pack") == []
    assert _notes("my sister lives in Leeds with her two greyhounds") == [("people", None)]


@pytest.mark.parametrize(
    ("text", "retraction"),
    [
        # a negated perfect up to a start, subject dropped or not
        ("haven't worked at Oracle since the spring", ("employer", "oracle")),
        ("we've not been living in Lyon since 2021, Nice is home", ("location", "lyon")),
        # "after all", and "no longer" with the subject dropped
        ("turns out I'm not asthmatic after all, spirometry was fine", ("health_conditions", "asthma")),
        ("apparently not allergic to latex after all", ("allergies", "latex")),
        ("no longer use Trello, too noisy", ("tools", "trello")),
        # done to the speaker
        ("the doctor took me off ramipril, losartan now", ("medications", "ramipril")),
        # tools removed
        ("uninstalled Slack, much calmer", ("tools", "slack")),
        # where one came from, and a home sold
        ("came over from Lagos three years ago and the winters still get me", ("location", "lagos")),
        ("relocated from Perth to Sydney for work", ("location", "perth")),
        ("sold our house in Hull last spring, renting now", ("location", "hull")),
        # careers and jobs
        ("switched careers from lawyer to nurse, no regrets", ("job_title", "lawyer")),
        ("gave in my notice to Morgan Stanley on Monday", ("employer", "morgan stanley")),
        ("my previous employer, Initech, was awful", ("employer", "initech")),
        ("former teacher, now writing software", ("job_title", "teacher")),
        # partners: a breakup in other words, a death
        ("Lena and I called it quits, we are still friends", ("partner", "lena")),
        ("my wife Ana passed in 2021, I miss her", ("partner", "ana")),
        # pets lost or given up, named after the species
        ("we lost Pip, our hamster, overnight", ("pets", "pip (hamster)")),
        ("the rabbit we had to rehome, Clover, was lovely", ("pets", "clover (rabbit)")),
    ],
)
def test_changes_in_other_words(text, retraction):
    assert retraction in _retracted(text)


def test_a_former_title_is_not_kept_as_the_title():
    facts = extract("former teacher, now writing software", occurred_at=REFERENCE).facts
    assert not [f for f in facts if f.key == "job_title"]


@pytest.mark.parametrize(
    ("text", "role", "expected"),
    [
        # colloquial dates on plans and events
        ("the review slipped to next Weds, annoying", "user", [("plan", date(2025, 6, 18))]),
        ("dentist a week today, dreading it", "user", [("plan", date(2025, 6, 18))]),
        ("off to Porto for a week in July, any tips?", "user", [("plan", date(2025, 7, 1))]),
        ("visiting my aunt tonight, she turns 80", "user", [("plan", date(2025, 6, 11))]),
        # something that happened in the speaker's life, told with a thing as its subject
        ("the car died on us last Tuesday, garage is shut", "user", [("event", date(2025, 6, 10))]),
        ("I was in Oslo last week for a conference", "user", [("event", date(2025, 6, 2))]),
        # a group's dated undertaking is a decision, a group trip stays a plan
        ("we launch the new site in September, fingers crossed", "user", [("decision", date(2025, 9, 1))]),
        ("two weeks till we move to Cardiff!", "user", [("decision", date(2025, 6, 25))]),
        ("next weekend the kids and I are off to the coast", "user", [("plan", date(2025, 6, 21))]),
        # not a choice: expecting, a chore
        ("we're expecting twins in December", "user", [("plan", date(2025, 12, 1))]),
        # an assistant restating what it will do
        (
            "Understood - I'll book the venue for the 20th, as you asked.",
            "assistant",
            [("decision", date(2025, 6, 20))],
        ),
        (
            "Got it - I'll send a reminder about the vet on Monday.",
            "assistant",
            [("decision", date(2025, 6, 16))],
        ),
    ],
)
def test_dated_notes_in_other_words(text, role, expected):
    assert _notes(text, role) == expected


@pytest.mark.parametrize(
    "text",
    [
        "my bday is on 9 Oct, just so you know",  # a yearly date is a fact
        "can't stop singing 'I'm gonna win' today",  # a lyric commits nobody
        "my neighbour's dog barks all night",  # about the dog, not the neighbour
        "I will look into it.",
    ],
)
def test_near_misses_make_no_note(text):
    assert _notes(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a time of one's life frames a story: an event without a calendar date
        ("when I was 12 I broke my arm falling off a trampoline", [("event", None)]),
        ("as a teenager I worked summers at a campsite in Devon", [("event", None)]),
        # a state then is no event
        ("when I was a kid I loved dinosaurs", []),
        ("as a boy I hoped to fly planes one day", []),
    ],
)
def test_a_time_of_life_dates_a_story(text, expected):
    assert _notes(text) == expected
