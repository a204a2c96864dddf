"""Synthetic but realistic notes and questions for the context benchmark.

Notes are composed from templates over many topics (people, places, foods, work projects,
tools, hobbies, pets, dates, numbers). Slot values are drawn with Zipf-like weights, and
project code names come from a few thousand made-up words, so full-text search sees a
realistic term distribution: a few very common words and a long tail of rare ones. Questions
are drawn from the same vocabulary, so most of them match some notes and a few match many.
Everything is deterministic for a given seed.
"""

import datetime
import itertools
import random
import string
from collections.abc import Iterator

PEOPLE = """Alice Bob Carla Dmitri Elena Farid Grace Hiro Ines Jonas Kemal Lena Marco Nadia Omar
Priya Quentin Rosa Sven Tanya Umar Vera Wes Xiaoling Yusuf Zoe Amara Bruno Chloe Diego Emil
Freya Gustav Hana Ivan Julia Kofi Lars Maya Nils Olga Pablo Rania Sami Talia Viktor Wanda
Yara Anton Beatriz Cyrus Daria Esme Felix Greta Hugo Isla Jasper Kira Leon Mila Noor""".split()

RELATIONS = """sister brother mother father cousin aunt uncle grandmother neighbour colleague
manager mentor landlord dentist doctor therapist coach teacher friend partner roommate""".split()

PLACES = """Lisbon Porto Berlin Hamburg Munich Vienna Prague Krakow Warsaw Riga Tallinn Helsinki
Oslo Bergen Copenhagen Malmo Amsterdam Utrecht Ghent Lyon Marseille Bordeaux Seville Valencia
Bilbao Naples Bologna Turin Trieste Zagreb Split Athens Istanbul Tbilisi Yerevan Marrakesh Cairo
Nairobi Lagos Accra Toronto Montreal Vancouver Seattle Portland Denver Austin Chicago Boston
Oaxaca Lima Cusco Santiago Kyoto Osaka Seoul Taipei Hanoi Bangkok Penang Melbourne Hobart
Wellington""".split()

VENUES = """bakery library gym park museum office cafe market beach lake harbour station airport
clinic studio garage garden bookshop cinema theatre stadium pool temple castle vineyard hostel
campsite brewery observatory""".split()

FOODS = """ramen sushi paella risotto lasagne dumplings tacos burritos curry biryani falafel
hummus shakshuka pho laksa bibimbap kimchi croissants sourdough bagels pancakes waffles
porridge granola goulash pierogi borscht moussaka souvlaki baklava tiramisu gelato churros
empanadas ceviche arepas couscous tagine injera jollof plantains poutine brisket cornbread
gumbo chowder oysters mussels halloumi gnocchi pesto focaccia pretzels strudel cheesecake
mochi""".split()

DRINKS = """espresso matcha chai kombucha lemonade cider stout riesling mezcal sake oolong
rooibos cortado""".split()

TOOLS = """Postgres Redis Kafka Docker Kubernetes Terraform Ansible Grafana Prometheus Sentry
Jenkins GitLab GitHub Jira Confluence Figma Notion Slack Zoom Excel Tableau Airflow Spark
Pandas NumPy PyTorch Django Flask FastAPI React Vue Svelte Webpack Vite TypeScript Rust Golang
Kotlin Swift Elixir Erlang Haskell Clojure Nginx Caddy Celery SQLite DuckDB Snowflake BigQuery
Metabase Superset Vim Emacs VSCode Blender Photoshop Lightroom Ableton Logic""".split()

HOBBIES = """climbing bouldering running cycling swimming rowing kayaking sailing surfing
skiing snowboarding hiking camping fishing birdwatching gardening pottery knitting crochet
woodworking painting sketching calligraphy photography chess poker sudoku crosswords
origami juggling salsa tango yoga pilates karate judo fencing archery baking brewing
fermenting beekeeping astronomy podcasting blogging volunteering choir guitar piano violin
cello drums saxophone ukulele""".split()

PETS = """cat dog rabbit parrot hamster tortoise goldfish ferret gecko canary""".split()
PET_NAMES = """Miso Biscuit Pepper Mango Noodle Tofu Pickle Olive Ziggy Luna Otto Pixel Bean
Waffle Sprout Clementine Juniper Nacho Pudding Kiwi""".split()

WORK_THINGS = """deadline launch migration refactor outage incident review roadmap budget
demo prototype release audit rollout backlog sprint retrospective handover onboarding
interview hackathon offsite benchmark dashboard pipeline contract invoice proposal""".split()

FEELINGS = """excited nervous relieved frustrated proud tired curious anxious grateful
annoyed thrilled bored hopeful overwhelmed calm""".split()

MONTHS = """January February March April May June July August September October November
December""".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()

SYLLABLES = """ka lo mi ra ven tor zu ak el ost pri da nor vel quin sar bel tam rix ul fen go
dra mur sil tek ban cor ith las""".split()


def _code_names(rng: random.Random, count: int) -> list[str]:
    names: dict[str, None] = {}
    while len(names) < count:
        names.setdefault("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize())
    return list(names)


NOTE_TEMPLATES = [
    "{person} said their {relation} is moving to {place} in {month} for a new job.",
    "I had {food} with {person} at a small {venue} in {place}; the {drink} was excellent.",
    "Project {code} uses {tool} and {tool2}; the {work} is planned for {weekday} {day} {month}.",
    "My {pet} {pet_name} hates the vet but loves {food}; next checkup is on {day} {month}.",
    "Started {hobby} lessons on {weekday}s at the {venue} near {place}, {number} euros a month.",
    "{person} recommended {tool} for the {work} on project {code}; they used it for {number} weeks.",
    "Felt {feeling} after the {work} for {code}: {tool} kept failing with error {number}.",
    "Booked a trip to {place} from {day} {month} to visit my {relation}; flights cost {number}.",
    "{person} is allergic to {food}, so avoid it at the {venue} dinner on {weekday}.",
    "Prefers {drink} over coffee and drinks it every morning before {hobby}.",
    "The {work} of {code} slipped to {month}; {person} owns the {tool} part.",
    "My {relation} {person} taught me {hobby} when I was {age}; we still do it in {place}.",
    "Bought a secondhand {instrument} for {number} euros from a shop in {place}.",
    "Lost my keys at the {venue} in {place} on {weekday}; {person} found them the next day.",
    "{person}'s birthday is on {day} {month}; they love {food} and {hobby}.",
    "We switched project {code} from {tool} to {tool2} because of the {work} in {month}.",
    "Ran {number} kilometres along the {venue} in {place}, felt {feeling} but slow.",
    "Cooked {food} for {person} and their {relation}; next time use less salt.",
    "Reminder: renew the {tool} licence before {day} {month}, it costs {number} a year.",
    "{person} and I argued about {hobby} versus {hobby2}; agreed to try both in {month}.",
    "Signed up for a {hobby} course in {place} starting {month}, taught by {person}.",
    "Doctor appointment on {weekday} {day} {month} at the clinic in {place}, bring the {pet} papers.",
    "My {pet} {pet_name} learned a new trick; {person} filmed it at the {venue}.",
    "Code review of {code} with {person}: rename the {tool} config and add a {work} checklist.",
    "I'm {feeling} about the move to {place}; {person} offered to help on {weekday}.",
    "Tried {food} with {drink} at the {venue} in {place}; would order it again, {number} stars.",
    "The {code} {work} needs sign-off from {person} and the {relation} team by {month}.",
    "Planning a {hobby} weekend in {place} with {person} and {person2} in {month}.",
    "{person} moved from {place} to {place2} and now works on {tool} at a startup.",
    "Keep {number} euros aside each month for the {hobby} gear and the trip to {place}.",
]

# Most notes carry one of these asides: the details that make two notes of the same template
# different facts (and keep dedup from merging them, as it would merge real repeats).
ASIDES = [
    "{person2} was there too.",
    "It rained the whole {weekday}.",
    "Remember to tell my {relation} about it.",
    "Costs went up to {number} this time.",
    "Same as last {month}, more or less.",
    "Next step: ask {person2} about {tool2}.",
    "Felt {feeling} about it afterwards.",
    "Took the train back from {place2} at {hour}.",
    "{person2} suggested {hobby2} instead.",
    "Write this down in the {code} notes.",
    "Followed by {food2} at home.",
    "Took {number} photos of the {venue}.",
]

QUESTION_TEMPLATES = [
    "Where is {person}'s {relation} moving to?",
    "What did I eat with {person} in {place}?",
    "Which tools does project {code} use?",
    "When is the next checkup for my {pet}?",
    "How much do the {hobby} lessons cost?",
    "What did {person} recommend for the {work}?",
    "Why was I {feeling} after the {work}?",
    "When am I visiting my {relation} in {place}?",
    "What food is {person} allergic to?",
    "What do I drink before {hobby}?",
    "Who owns the {tool} part of {code}?",
    "Who taught me {hobby}?",
    "When is {person}'s birthday?",
    "Why did we switch {code} away from {tool}?",
    "What did I cook for {person}?",
    "When does the {tool} licence expire?",
    "Who is teaching the {hobby} course in {place}?",
    "What trick did {pet_name} learn?",
    "What came out of the {code} code review with {person}?",
    "Who is helping with the move to {place}?",
    "Which {food} place in {place} did I like?",
    "Who has to sign off the {code} {work}?",
    "What are the plans for the {hobby} weekend with {person}?",
    "Where does {person} work now?",
    "how is {code} going",
    "remind me about {person}",
]


# the tags a note gets from the slots its template fills (as reflection would tag it)
SLOT_TAGS = {
    "person": "people",
    "relation": "family",
    "place": "travel",
    "food": "food",
    "drink": "food",
    "tool": "work",
    "code": "work",
    "hobby": "hobby",
    "pet": "pets",
    "feeling": "mood",
}


def _template_tags(template: str) -> list[str]:
    slots = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    return sorted({SLOT_TAGS[s] for s in slots if s in SLOT_TAGS})


TEMPLATE_TAGS = {template: _template_tags(template) for template in NOTE_TEMPLATES}


def _zipf_sampler(rng: random.Random, values: list[str], s: float = 1.05):
    """Pick from `values` with weight 1/rank^s over a seeded shuffle (rank order per seed)."""
    ranked = list(values)
    rng.shuffle(ranked)
    cum = list(itertools.accumulate(1.0 / (rank**s) for rank in range(1, len(ranked) + 1)))

    def pick() -> str:
        return rng.choices(ranked, cum_weights=cum)[0]

    return pick


class Vocabulary:
    """Seeded slot samplers shared by notes and questions."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        rng = self.rng
        self.pickers = {
            "person": _zipf_sampler(rng, PEOPLE),
            "relation": _zipf_sampler(rng, RELATIONS),
            "place": _zipf_sampler(rng, PLACES),
            "venue": _zipf_sampler(rng, VENUES),
            "food": _zipf_sampler(rng, FOODS),
            "drink": _zipf_sampler(rng, DRINKS),
            "tool": _zipf_sampler(rng, TOOLS),
            "hobby": _zipf_sampler(rng, HOBBIES),
            "pet": _zipf_sampler(rng, PETS),
            "pet_name": _zipf_sampler(rng, PET_NAMES),
            "work": _zipf_sampler(rng, WORK_THINGS),
            "feeling": _zipf_sampler(rng, FEELINGS),
            "month": _zipf_sampler(rng, MONTHS, s=0.3),
            "weekday": _zipf_sampler(rng, WEEKDAYS, s=0.3),
            "code": _zipf_sampler(rng, _code_names(rng, 3000), s=0.9),
            "instrument": _zipf_sampler(rng, "guitar piano violin cello drums saxophone ukulele".split()),
        }

    def slots(self) -> dict[str, str]:
        rng, p = self.rng, self.pickers
        values = {name: pick() for name, pick in p.items()}
        values.update(
            person2=p["person"](),
            place2=p["place"](),
            tool2=p["tool"](),
            hobby2=p["hobby"](),
            day=str(rng.randint(1, 28)),
            number=str(rng.choice([rng.randint(2, 99), rng.randint(100, 2000)])),
            age=str(rng.randint(6, 40)),
            food2=p["food"](),
            hour=f"{rng.randint(6, 23)}:{rng.choice(['00', '15', '30', '45'])}",
        )
        return values


def notes(
    count: int, *, seed: int, start: datetime.datetime | None = None
) -> Iterator[tuple[str, list[str], datetime.datetime]]:
    """`count` (content, tags, occurred_at), spread evenly over the two years before `start`."""
    vocab = Vocabulary(seed)
    rng = vocab.rng
    start = start or datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    span = datetime.timedelta(days=730).total_seconds()
    for i in range(count):
        template = rng.choice(NOTE_TEMPLATES)
        slots = vocab.slots()
        content = template.format(**slots)
        if rng.random() < 0.8:
            content += " " + rng.choice(ASIDES).format(**slots)
        when = start - datetime.timedelta(seconds=span * (count - i) / max(count, 1))
        yield content, TEMPLATE_TAGS[template], when


def questions(count: int, *, seed: int) -> list[str]:
    """`count` questions over the same vocabulary (a different stream from the notes)."""
    vocab = Vocabulary(seed)
    vocab.rng.seed(seed + 1_000_003)  # same rank orders as the notes, different draws
    return [vocab.rng.choice(QUESTION_TEMPLATES).format(**vocab.slots()) for _ in range(count)]


def chat_messages(count: int, *, seed: int) -> Iterator[str]:
    """Short chat turns for the message-ingest measurement."""
    vocab = Vocabulary(seed + 7)
    for _ in range(count):
        s = vocab.slots()
        yield vocab.rng.choice(
            [
                f"Hey, did you hear that {s['person']} is going to {s['place']} in {s['month']}?",
                f"I can't decide between {s['food']} and {s['food']} tonight, any thoughts?",
                f"The {s['work']} for {s['code']} is blocked on {s['tool']} again.",
                f"Remind me to call my {s['relation']} on {s['weekday']} about {s['hobby']}.",
                f"{s['pet_name']} knocked over my {s['drink']} this morning, classic.",
            ]
        )
