"""A terminal chat with memory: the official openai SDK against any OpenAI-compatible server,
memoryweb as the memory sidecar.

Each turn:
  1. post the user's message to memoryweb and get the memory context for it;
  2. call the model with the stable prefix as the system message, the rest of the context
     (profile, recalled notes, …) as a second system message just before the user's message,
     and the memory tools (`tools=memory.tools("openai")`);
  3. while the model asks for tools, run each call through memoryweb and send the results back
     (at most MAX_TOOL_ROUNDS rounds);
  4. print the answer and post it to memoryweb, which then reflects on the turn.

    export OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=… OPENAI_MODEL=llama3.1
    export MEMORYWEB_API_KEY=mw_…
    python examples/chat.py --subject alice --conversation terminal-1
    python examples/chat.py --subject alice --once "Where should I eat in Lisbon?" --dry-run

`--dry-run` calls no model: it prints the request it would send (messages and tools) as JSON.
It still opens the conversation and fetches the memory context, but posts no messages.
Needs only `openai` and `httpx` (and memoryweb/client.py), not Django.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

import openai

from memoryweb.client import MemoryWeb, MemoryWebError

MAX_TOOL_ROUNDS = 5
INSTRUCTIONS = (
    "You are a helpful assistant with a long-term memory of the user. Use what the memory below "
    "says when it helps; call the memory tools to look things up or to remember something."
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A terminal chat with memoryweb as its memory.")
    parser.add_argument("--subject", required=True, help="who is chatting (the memoryweb subject)")
    parser.add_argument("--conversation", default="terminal", help="the conversation's external id")
    parser.add_argument(
        "--memoryweb-url", default=os.environ.get("MEMORYWEB_BASE_URL", "http://127.0.0.1:8000")
    )
    parser.add_argument("--api-key", default=os.environ.get("MEMORYWEB_API_KEY", ""), help="mw_…")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--dry-run", action="store_true", help="print the request, call no model")
    parser.add_argument("--once", metavar="MESSAGE", help="one turn with MESSAGE, then exit")
    args = parser.parse_args(argv)
    if not args.api_key:
        parser.error("a memoryweb API key is needed: --api-key or MEMORYWEB_API_KEY")
    return args


class Chat:
    """One conversation: the local history the model sees, memoryweb for everything else."""

    def __init__(self, memory: MemoryWeb, llm: openai.OpenAI | None, args: argparse.Namespace, out: TextIO):
        self.memory, self.llm, self.args, self.out = memory, llm, args, out
        self.conversation_id = memory.conversation(args.subject, external_id=args.conversation)["id"]
        self.tools = memory.tools("openai")
        self.history: list[dict[str, Any]] = []  # user and assistant turns, without memory

    def request(self, text: str) -> list[dict[str, Any]]:
        """The messages for the model: instructions + stable prefix, history, memory tail, user."""
        context = self.memory.context(self.args.subject, text, conversation_id=self.conversation_id)
        system = "\n\n".join(part for part in (INSTRUCTIONS, context.stable_prefix) if part)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, *self.history]
        if context.tail:
            messages.append(
                {"role": "system", "content": "What memory recalls for this message:\n\n" + context.tail}
            )
        messages.append({"role": "user", "content": text})
        return messages

    def turn(self, text: str) -> str | None:
        """One exchange; returns the answer (None on a dry run)."""
        if self.args.dry_run:
            request = {"model": self.args.model, "messages": self.request(text), "tools": self.tools}
            print(json.dumps(request, indent=2, ensure_ascii=False), file=self.out)
            return None
        self.memory.add_message(self.conversation_id, text)
        messages = self.request(text)
        answer = self.complete(messages)
        print(answer, file=self.out)
        self.memory.respond(self.conversation_id, answer)  # queues the reflection on the turn
        self.history += [{"role": "user", "content": text}, {"role": "assistant", "content": answer}]
        return answer

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """Call the model until it answers in text, running the memory tools it asks for."""
        assert self.llm is not None
        for _ in range(MAX_TOOL_ROUNDS + 1):
            response = self.llm.chat.completions.create(
                model=self.args.model,
                messages=messages,  # plain dicts, as the API takes them
                tools=self.tools,
            )
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))  # the assistant's tool calls
            for call in message.tool_calls:
                outcome = self.memory.tool_call(self.conversation_id, call)
                print(f"  [{outcome['tool']}: {'ok' if outcome['ok'] else 'failed'}]", file=sys.stderr)
                messages.append(outcome["result"])  # the role: tool message for this call
        # Still calling tools after the last round: ask once more, without tools.
        response = self.llm.chat.completions.create(model=self.args.model, messages=messages)
        return response.choices[0].message.content or ""


def main(
    argv: list[str] | None = None,
    *,
    memory: MemoryWeb | None = None,
    llm: openai.OpenAI | None = None,
    out: TextIO | None = None,
) -> int:
    """The CLI. `memory` and `llm` replace the clients built from the arguments (for tests)."""
    args = parse_args(argv)
    out = out or sys.stdout
    own_memory = memory is None
    memory = memory or MemoryWeb(args.memoryweb_url, args.api_key)
    if llm is None and not args.dry_run:
        llm = openai.OpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY come from the environment
    try:
        chat = Chat(memory, llm, args, out)
        if args.once is not None:
            return 0 if safe_turn(chat, args.once) else 1
        while True:
            try:
                text = input("you> ").strip()
            except (EOFError, KeyboardInterrupt):
                print(file=out)
                return 0
            if text:
                safe_turn(chat, text)  # on an error the loop goes on with the next line
    except MemoryWebError as exc:  # opening the conversation failed
        print(f"memoryweb: {exc}", file=sys.stderr)
        return 1
    finally:
        if own_memory:
            memory.close()


def safe_turn(chat: Chat, text: str) -> bool:
    """One turn; an error of memoryweb or of the model is shown, not raised."""
    try:
        chat.turn(text)
        return True
    except MemoryWebError as exc:
        print(f"memoryweb: {exc}", file=sys.stderr)
    except openai.OpenAIError as exc:
        print(f"model: {type(exc).__name__}: {exc}", file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(main())
