"""Browser tests: the real memoryweb, driven by a real headless Chromium.

One server for all the browser tests (package scope: it stops when they are done, not at the
end of the whole suite), started the way a person starts it: `manage.py runall` (daphne plus a
Celery worker with beat embedded, each in its own process group) on a free port, with its own
var dir and SQLite file, migrated first. Its data is made through real paths only: the
`createapp` command, the REST API with the app's key (which runs reflection in the worker), and a
small `manage.py shell` step for the dashboard logins, which no API creates. The test process
never opens the server's database.

Chromium is Debian's `/usr/bin/chromium`, launched by Playwright (the Python package bundles its
driver; `playwright install` is never run). Playwright's sync API keeps an asyncio loop running
while it is started, and Django refuses database access under a running loop, so Playwright and
its browser live per module: the loop is gone before any other test module runs.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from memoryweb.client import MemoryWeb
from tests.support import in_ci, wait_until

try:  # the test modules take `expect` from here, so they import without Playwright (and skip)
    from playwright.sync_api import expect
except ImportError:
    expect = None

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = ROOT / "docs" / "screenshots"
# Generous: up to eight helpers share two cores, and a wait ends as soon as its condition holds.
WAIT_MS = 20_000
APP_NAME = "browser"


def _missing_requirement() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="session")
def browser_requirements():
    """Skip when Chromium or Playwright is missing, except in CI, where that is a failure."""
    reason = _missing_requirement()
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"CI is set, so the browser tests must run, but {reason}", pytrace=False)
    pytest.skip(reason)


# --- the server ---------------------------------------------------------------------------


@dataclass
class Person:
    """A dashboard login and the subject it owns."""

    username: str
    password: str
    external_id: str
    display_name: str
    subject_id: int = 0

    def page_url(self, page: str) -> str:
        return f"/s/{self.subject_id}/{page}/"


@dataclass
class Server:
    url: str
    var_dir: Path
    log_path: Path
    env: dict
    api_key: str = ""
    people: dict[str, Person] = field(default_factory=dict)

    def manage(self, *args: str, timeout: float = 180) -> str:
        """Run a management command against the server's own database; its stdout."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_PEOPLE_SCRIPT = """
import json
from django.contrib.auth import get_user_model
from memory.models import App
from memory.services import subject_get_or_create

people = json.loads({people!r})
app = App.objects.get(name={app!r})
ids = {{}}
for person in people:
    user = get_user_model().objects.create_user(person["username"], password=person["password"])
    subject = subject_get_or_create(app=app, external_id=person["external_id"])
    subject.owner = user
    subject.display_name = person["display_name"]
    subject.save(update_fields=["owner", "display_name"])
    ids[person["username"]] = subject.pk
print(json.dumps(ids))
"""


@pytest.fixture(scope="package")
def server(browser_requirements, tmp_path_factory):
    """`manage.py runall` on a fresh var dir and SQLite file, until the browser tests are done."""
    base = tmp_path_factory.mktemp("browser-server")
    var_dir = base / "var"
    env = dict(os.environ)
    for name in ("CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "REDIS_URL", "SECRET_KEY", "DEBUG"):
        env.pop(name, None)
    env.update(
        MEMORYWEB_VAR_DIR=str(var_dir),
        DATABASE_URL=f"sqlite:///{var_dir / 'memoryweb.sqlite3'}",
        DJANGO_SETTINGS_MODULE="memoryweb.settings",
        PYTHONUNBUFFERED="1",
    )
    port = _free_port()
    srv = Server(url=f"http://127.0.0.1:{port}", var_dir=var_dir, log_path=base / "runall.log", env=env)

    srv.manage("migrate", "--noinput")
    with open(srv.log_path, "wb") as log:
        runall = subprocess.Popen(
            [sys.executable, "manage.py", "runall", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        # The app and the logins are made while the server boots (SQLite queues the writers).
        created = srv.manage("createapp", APP_NAME)
        srv.api_key = re.search(r"api key \(shown once, store it now\): (\S+)", created).group(1)
        people = [
            Person("alice", "alice-browser-pass", "alice", "Alice Martins"),
            Person("bob", "bob-browser-pass", "bob", "Bob Keller"),
        ]
        script = _PEOPLE_SCRIPT.format(people=json.dumps([vars(p) for p in people]), app=APP_NAME)
        ids = json.loads(srv.manage("shell", "-c", script).strip().splitlines()[-1])
        for person in people:
            person.subject_id = ids[person.username]
            srv.people[person.username] = person

        if not wait_until(lambda: _answers(f"{srv.url}/accounts/login/"), timeout=120, interval=0.25):
            pytest.fail(f"memoryweb did not answer on {srv.url}:\n{srv.log_tail()}", pytrace=False)
        # Reflection runs in the worker; the data below needs it ready.
        if not wait_until(
            lambda: " ready." in srv.log_path.read_text(errors="replace"), timeout=120, interval=0.25
        ):
            pytest.fail(f"the Celery worker did not start:\n{srv.log_tail()}", pytrace=False)
        yield srv
    finally:
        children = [int(pid) for pid in re.findall(r"started \w+: pid (\d+)", srv.log_path.read_text())]
        if runall.poll() is None:
            runall.send_signal(signal.SIGINT)  # runall stops each child's process group
            try:
                runall.wait(timeout=60)
            except subprocess.TimeoutExpired:
                runall.kill()
                runall.wait()
        for pgid in [runall.pid, *children]:
            if _group_alive(pgid):
                os.killpg(pgid, signal.SIGKILL)


@pytest.fixture(scope="package")
def memory(server):
    """The Python client with the app's key: how a chat app writes to the server."""
    with MemoryWeb(server.url, api_key=server.api_key, timeout=60) as client:
        yield client


@pytest.fixture(scope="package")
def alice(server) -> Person:
    return server.people["alice"]


@pytest.fixture(scope="package")
def bob(server) -> Person:
    return server.people["bob"]


def chat_turn(memory: MemoryWeb, subject: str, user_text: str, reply: str, *, conversation: str) -> dict:
    """One turn of a chat app: the user's message, the assistant's reply, then wait until the
    worker has reflected on it (reflection is what extracts facts, notes and pending items)."""
    conv = memory.conversation(subject, external_id=conversation)
    memory.add_message(conv["id"], user_text)
    memory.respond(conv["id"], reply)
    flushed = memory.flush(subject, conversation_id=conv["id"], timeout_ms=60_000)
    assert flushed["done"], f"reflection of {conversation!r} did not finish: {flushed}"
    return conv


ALICE_FACTS = [
    # key, value, pinned, keywords
    ("name", "Alice Martins", True, []),
    ("city", "Porto", True, []),
    ("city", "Lisbon", True, []),  # she moved: two versions of one fact
    ("job", "data engineer at Tidewater Analytics", True, []),
    ("coffee", "flat white with oat milk", False, ["coffee", "cafe", "breakfast"]),
    ("running_goal", "Lisbon half marathon in March, under 1:50", False, ["running", "marathon", "race"]),
]
ALICE_NOTES = [
    ("Alice is training for the Lisbon half marathon; her long run is every Sunday morning", ["running"]),
    ("Alice's marathon training plan: three easy runs, one tempo run and one long run a week", ["running"]),
    ("Alice's long runs go 18 km along the river; she refuels with dates and water", ["running"]),
    ("Alice runs before 7am in summer because the afternoon heat in Lisbon wears her out", ["running"]),
    ("Alice's cat is called Miso and hides under the bed when the vacuum cleaner runs", ["pets"]),
    ("Miso the cat is due for her vaccination booster at the vet in May", ["pets"]),
    ("Alice is moving the Tidewater data pipelines from cron jobs to Airflow this quarter", ["work"]),
    ("Alice's team reviews pull requests before lunch; she dislikes late-afternoon meetings", ["work"]),
    ("Alice is planning a trip to Kyoto in October with her sister Marta", ["travel"]),
    ("Alice wants vegetarian restaurant ideas near Alfama for Friday dinners", ["food"]),
    ("Alice is learning Japanese with a tutor on Thursday evenings before the Kyoto trip", ["languages"]),
]
# A cluster that links up and that consolidation distils into a lesson (and a procedure).
ALICE_BAKING_NOTES = [
    "Alice's sourdough bake: feed the starter the night before, then mix flour, water and salt in the morning",
    "Alice's sourdough bake: after mixing the dough, stretch and fold it every 30 minutes for two hours",
    "Alice's sourdough bake: shape the dough, proof it overnight in the fridge, then bake it in a hot Dutch oven",
    "Alice's sourdough bake comes out dense when the starter is not bubbly: feed the starter twice before the bake",
]
# Turns whose reflection asks for consent (health and relationships are "ask" by default).
ALICE_SENSITIVE_TURNS = [
    (
        "I was diagnosed with asthma two years ago, so cold mornings are hard on my runs.",
        "Thanks for telling me. A longer warm-up indoors can help on cold mornings.",
    ),
    (
        "I'm allergic to peanuts, keep that in mind when you suggest restaurants.",
        "Noted: I'll leave out places that cook with peanuts.",
    ),
]
ALICE_CONTEXT_QUESTIONS = [
    "How is my marathon training going?",
    "Any vegetarian restaurant near Alfama for Friday?",
    "What should I pack for Kyoto?",
]


def consolidate(server: Server, subject: str) -> int:
    """Ask for consolidation now (`POST /subjects/S/consolidate` queues it, 202), wait for the
    worker through `flush`, and return how many lessons the subject has."""
    headers = {"Authorization": f"Bearer {server.api_key}"}
    answer = httpx.post(f"{server.url}/api/v1/subjects/{subject}/consolidate", headers=headers, timeout=60)
    assert answer.status_code == 202, answer.text
    flushed = httpx.post(
        f"{server.url}/api/v1/flush",
        headers=headers,
        json={"subject": subject, "timeout_ms": 30_000},
        timeout=60,
    )
    assert flushed.status_code == 200 and flushed.json()["done"], flushed.text
    lessons = httpx.get(f"{server.url}/api/v1/subjects/{subject}/lessons", headers=headers, timeout=60)
    return len(lessons.json()["lessons"])


@pytest.fixture(scope="package")
def alice_memory(server, memory, alice) -> dict:
    """Alice's memory, written the way a chat app writes it: facts and notes through the API,
    turns that reflection turns into pending consent items, and a few context builds."""
    for key, value, pinned, keywords in ALICE_FACTS:
        memory.profile_set(alice.external_id, key, value, pinned=pinned, keywords=keywords or None)
    for content in ALICE_BAKING_NOTES:
        memory.note_store(alice.external_id, content, tags=["baking"])
    notes = [memory.note_store(alice.external_id, content, tags=tags)["id"] for content, tags in ALICE_NOTES]
    for number, (user_text, reply) in enumerate(ALICE_SENSITIVE_TURNS):
        chat_turn(memory, alice.external_id, user_text, reply, conversation=f"seed-{number}")
    for question in ALICE_CONTEXT_QUESTIONS:
        memory.context(alice.external_id, question)
    # the notes are linked by a worker task; consolidation finds the cluster once they are
    consolidated = wait_until(lambda: consolidate(server, alice.external_id), timeout=60, interval=2)
    assert consolidated, "consolidation distilled no lesson from the baking notes"
    pending = memory.pending(alice.external_id)
    assert len(pending) >= 2, f"reflection queued no consent items: {pending}"
    return {"notes": notes, "pending": pending}


# --- the browser --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(browser_requirements):
    from playwright.sync_api import sync_playwright

    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.browser_call_failed = report.failed
    return report


@pytest.fixture
def new_page(request, browser, server, tmp_path):
    """Open pages in fresh browser contexts (separate cookie jars) at laptop size.

    When the test fails, each page's last view is saved next to the test's tmp files.
    """
    from playwright.sync_api import Error as PlaywrightError

    contexts = []

    def open_page(viewport: dict | None = None, storage_state: dict | None = None):
        """A page in a new context; STORAGE_STATE (cookies) opens it signed in already."""
        context = browser.new_context(
            viewport=viewport or LAPTOP, base_url=server.url, storage_state=storage_state
        )
        context.set_default_timeout(WAIT_MS)
        contexts.append(context)
        return context.new_page()

    yield open_page
    failed = getattr(request.node, "browser_call_failed", False)
    for number, context in enumerate(contexts):
        if failed:
            for page in context.pages:
                shot = tmp_path / f"failure-{number}.png"
                try:
                    page.screenshot(path=str(shot), full_page=True)
                except PlaywrightError as exc:  # a crashed page: the failure itself says enough
                    print(f"no screenshot of {page.url}: {exc}")
                else:
                    print(f"page {page.url} at failure: {shot}")
        context.close()
    if failed:
        print(f"server log tail:\n{server.log_tail()}")


@pytest.fixture
def page(new_page):
    return new_page()


def log_in(page, person: Person) -> None:
    """Log in through the login form, as a person does."""
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(person.username)
    page.get_by_label("Password").fill(person.password)
    page.get_by_role("button", name=re.compile(r"log in|sign in", re.I)).click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def save_screenshot(page, name: str) -> Path:
    """Write docs/screenshots/NAME.png (overwritten each run) for the README."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    partial = path.with_suffix(".png.tmp")
    page.screenshot(path=str(partial), type="png")
    shutil.move(partial, path)
    return path
