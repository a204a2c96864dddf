"""The MCP server with the official MCP client: `manage.py mcp` over stdio, and streamable HTTP
at /mcp of a real daphne serving memoryweb.asgi, each against a migrated SQLite database."""

import json
import os
import shutil
import subprocess
import sys

import anyio
import httpx
import httpx2
import pytest
from django.conf import settings
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.memoryweb.stack import free_port, stack_env
from tests.support import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.own_stack]

MCP_TOOLS = {"get_context", "add_memory", "search_memories", "list_memories", "delete_memory"}


def manage(var_dir, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=stack_env(var_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# One Django shell seeds the whole stack (each process start costs seconds): two Apps, ours with
# a key, a fact and a MEMORY.md for subject "ada", the other with a note; prints the key and the
# other App's note id.
SEED = """
from memory.config import get_config
from memory.services import Actor, api_key_create, app_create, note_store
from memory.services.apps import subject_get_or_create
from memory.services.documents import document_write
from memory.services.facts import fact_set

actor = Actor.system("test")
ours = app_create(name="mcp-app", actor=actor)
_, key = api_key_create(app=ours, name="", rate_limit="", actor=actor)
ada = subject_get_or_create(app=ours, external_id="ada")
fact_set(subject=ada, key="editor", value="helix", actor=actor)
document_write(subject=ada, path="MEMORY.md", content="# Ada\\nprefers small commits", actor=actor)
other = app_create(name="other-app", actor=actor)
theirs = subject_get_or_create(app=other, external_id="ada")
note, _ = note_store(subject=theirs, content="the other app keeps this", actor=actor, config=get_config(other))
print(key, note.pk)
"""


def result_of(call) -> dict:
    return json.loads(call.content[0].text)


async def exercise(session: ClientSession, *, other_note: int) -> None:
    """What both transports must do: the tools, a memory.* tool, a resource, tenant checks."""
    await session.initialize()
    listed = {tool.name for tool in (await session.list_tools()).tools}
    assert MCP_TOOLS <= listed
    assert "memory_profile_list" in listed  # the memory.* tools, under their wire names

    added = await session.call_tool("add_memory", {"content": "The deploy target is Hetzner in Falkenstein"})
    assert not added.is_error, added.content
    note_id = result_of(added)["id"]
    found = result_of(await session.call_tool("search_memories", {"query": "Falkenstein deploy"}))
    assert [note["id"] for note in found["notes"]] == [note_id]
    assert "Falkenstein" in found["notes"][0]["content"]

    context = result_of(await session.call_tool("get_context", {"message": "where do we deploy?"}))
    assert "Falkenstein" in context["context"]
    listed_memories = result_of(await session.call_tool("list_memories", {"kind": "all"}))
    assert [note["id"] for note in listed_memories["notes"]] == [note_id]
    assert [fact["key"] for fact in listed_memories["facts"]] == ["editor"]
    profile = result_of(await session.call_tool("memory.profile.list", {}))
    assert [(fact["key"], fact["value"]) for fact in profile["facts"]] == [("editor", "helix")]

    # arguments the schema does not name (a subject, say) are refused as a result, not obeyed
    widened = await session.call_tool("list_memories", {"subject": "someone-else"})
    assert widened.is_error and result_of(widened)["error"]["field"] == "subject"

    resources = (await session.list_resources()).resources
    assert [str(resource.uri) for resource in resources] == ["memory://root/MEMORY.md"]
    read = await session.read_resource("memory://root/MEMORY.md")
    assert "prefers small commits" in read.contents[0].text

    # another App's note is not this session's to delete: refused, and still there
    refused = await session.call_tool("delete_memory", {"id": other_note})
    assert refused.is_error and result_of(refused)["error"]["code"] == "not_found"
    deleted = await session.call_tool("delete_memory", {"id": note_id})
    assert not deleted.is_error
    after = result_of(await session.call_tool("search_memories", {"query": "Falkenstein"}))
    assert after["notes"] == []


@pytest.fixture(scope="module")
def stack(_migrated_template, tmp_path_factory):
    """The seeded var dir, shared by this module's tests: `exercise` deletes what it adds."""
    var_dir = tmp_path_factory.mktemp("mcp") / "var"
    var_dir.mkdir()
    for name in ("memoryweb.sqlite3", "secret_key"):
        shutil.copy(_migrated_template / name, var_dir / name)
    key, other_note = manage(var_dir, "shell", "-c", SEED).split()[-2:]
    return var_dir, key, int(other_note)


def stdio_params(var_dir, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp"],
        cwd=str(settings.BASE_DIR),
        env={**stack_env(var_dir), **env},
    )


def test_stdio_serves_the_tools_and_resources_of_its_subject(stack):
    var_dir, key, other_note = stack

    async def run():
        params = stdio_params(var_dir, MEMORYWEB_API_KEY=key, MEMORYWEB_SUBJECT="ada")
        with anyio.fail_after(120):  # a hang fails the test instead of stalling the suite
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await exercise(session, other_note=other_note)

    anyio.run(run)


def test_stdio_refuses_a_bad_or_missing_key_and_a_missing_subject(stack):
    var_dir, key, _ = stack
    for env, expected in (
        ({"MEMORYWEB_SUBJECT": "ada"}, "missing API key"),
        ({"MEMORYWEB_API_KEY": "mw_nope_nope", "MEMORYWEB_SUBJECT": "ada"}, "invalid API key"),
        ({"MEMORYWEB_API_KEY": key}, "MEMORYWEB_SUBJECT"),
    ):
        environment = {k: v for k, v in stack_env(var_dir).items() if not k.startswith("MEMORYWEB_API_KEY")}
        done = subprocess.run(
            [sys.executable, "manage.py", "mcp"],
            cwd=settings.BASE_DIR,
            env={**environment, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode != 0
        assert expected in done.stderr, done.stderr


@pytest.fixture(scope="module")
def web(stack, tmp_path_factory):
    var_dir, key, other_note = stack
    port = free_port()
    log_path = tmp_path_factory.mktemp("daphne") / "daphne.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-p", str(port), "memoryweb.asgi:application"],
            cwd=settings.BASE_DIR,
            env=stack_env(var_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def up() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/api/v1/live", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        assert wait_until(up, timeout=60, interval=0.2), log_path.read_text()
        yield f"http://127.0.0.1:{port}/mcp", key, other_note, log_path
    finally:
        os.killpg(process.pid, 9)
        process.wait()


def test_streamable_http_serves_the_tools_and_resources_of_its_subject(web):
    url, key, other_note, log_path = web

    async def run():
        headers = {"Authorization": f"Bearer {key}", "X-Memoryweb-Subject": "ada"}
        with anyio.fail_after(120):  # a hang fails the test instead of stalling the suite
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await exercise(session, other_note=other_note)

    anyio.run(run)


def test_streamable_http_refuses_a_request_without_a_good_key_or_a_subject(web):
    url, key, _, _ = web
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    missing = httpx.post(url, json=hello, headers=accept | {"X-Memoryweb-Subject": "ada"})
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["error"]["message"].startswith("missing API key")
    bad = httpx.post(
        url, json=hello, headers=accept | {"Authorization": "Bearer mw_x_y", "X-Memoryweb-Subject": "a"}
    )
    assert bad.status_code == 401 and bad.json()["error"]["message"] == "invalid API key"
    no_subject = httpx.post(url, json=hello, headers=accept | {"Authorization": f"Bearer {key}"})
    assert no_subject.status_code == 400 and no_subject.json()["error"]["field"] == "subject"


# --- the person's pause of the app for their memory ------------------------------------------
@pytest.mark.django_db
def test_a_tool_call_for_a_subject_that_paused_the_app_is_refused_and_writes_nothing(api_key, subject, actor):
    from memory.models import Note, SubjectAppPause
    from memoryweb.mcp.server import _call, session_open

    session = session_open(raw_key=api_key, subject=subject.external_id)
    SubjectAppPause.objects.create(subject=subject, app=subject.app)

    result = _call(session, "memory_notes_store", {"content": "Alice keeps bees"})

    assert result.is_error
    assert result.structured_content["error"]["code"] == "app_paused_for_subject"
    assert not Note.objects.filter(subject=subject).exists()


@pytest.mark.django_db
def test_a_tool_call_for_another_subject_of_the_app_still_runs(api_key, subject):
    from memory.models import Note, SubjectAppPause
    from memoryweb.mcp.server import _call, session_open

    SubjectAppPause.objects.create(subject=subject, app=subject.app)
    session = session_open(raw_key=api_key, subject="carol")

    result = _call(session, "memory_notes_store", {"content": "Carol keeps bees"})

    assert not result.is_error, result.structured_content
    assert Note.objects.filter(subject__external_id="carol", content="Carol keeps bees").exists()


@pytest.mark.django_db
def test_the_resources_of_a_subject_that_paused_the_app_are_refused(api_key, subject):
    from mcp.shared.exceptions import MCPError

    from memory.models import SubjectAppPause
    from memoryweb.mcp.server import _read, _resources, session_open

    session = session_open(raw_key=api_key, subject=subject.external_id)
    SubjectAppPause.objects.create(subject=subject, app=subject.app)

    with pytest.raises(MCPError, match="paused"):
        _resources(session)
    with pytest.raises(MCPError, match="paused"):
        _read(session, "memory://root/MEMORY.md")
