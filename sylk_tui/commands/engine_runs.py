"""The ``sylk`` commands that run on an engine: ``run``, ``route``, ``sessions list|new``.

Loaded only when such a command runs: the engine, the settings model and the event
models are imported here, never by ``sylk_tui.cli``, so the TUI's start does not pay
for them before its first frame.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from backend.config.settings import SylkConfig
from backend.errors import ArchiveWriteError, SylkError
from backend.events import (
    AgentStepEvent,
    EngineEvent,
    IndexProgress,
    MessageAppended,
    event_to_json,
)
from backend.guide.routing.decision import describe_route
from backend.messages import Message, MessageType
from sylk_tui import paths
from sylk_tui.commands import session_models as session_models_cli
from sylk_tui.commands import sessions_io
from sylk_tui.commands.exit_codes import (
    EXIT_ERROR,
    EXIT_OFFLINE,
    EXIT_OK,
    status_for,
)
from sylk_tui.commands.run_output import (
    STREAMED_TEXT,
    TOOL_STEPS,
    AnswerStream,
    approval_refusal,
    json_stdout,
    report_not_saved,
    run_session,
    run_settings,
    turn_exit,
)
from sylk_tui.commands.run_plan import PlanProgress, ask_at_terminal, follow_plans
from sylk_tui.logs import configure_logging

if TYPE_CHECKING:
    from backend.engine import Engine


def engine_for(args: argparse.Namespace, settings: SylkConfig | None = None) -> Engine:
    from backend.engine import Engine, EngineConfig

    config = EngineConfig(
        data_dir=paths.data_dir(args.data_dir),
        workspace=paths.workspace(args.workspace),
        config_file=paths.config_file(),
        provider=getattr(args, "provider", None),
        model=getattr(args, "model", None),
        approval_mode=getattr(args, "approval", None),
        assume_yes=getattr(args, "yes", False),
    )
    engine = Engine(config, settings)
    configure_logging(config.data_dir, engine.redactor)
    return engine


async def with_engine(
    args: argparse.Namespace,
    body: Callable[[Engine], Awaitable[int]],
    settings: SylkConfig | None = None,
) -> int:
    engine = engine_for(args, settings)
    try:
        return await body(engine)
    except SylkError as exc:  # said here, where the engine's redactor can scrub it
        print(f"sylk: error: {engine.redactor.text(str(exc))}", file=sys.stderr)
        return status_for(exc)
    finally:
        await engine.aclose()


def cmd_list(args: argparse.Namespace) -> int:
    async def listing(engine: Engine) -> int:
        return await sessions_io.list_sessions(engine, args.json, args.team)

    return asyncio.run(with_engine(args, listing))


def cmd_new(args: argparse.Namespace) -> int:
    async def body(engine: Engine) -> int:
        session = await session_models_cli.create(engine, args)
        print(f"{session.id}\t{session.name}")
        return EXIT_OK

    return asyncio.run(with_engine(args, body))


def cmd_run(args: argparse.Namespace) -> int:
    text = " ".join(args.text)
    answer = AnswerStream()
    settings = run_settings(args)
    progress = PlanProgress()

    json_out = sys.stdout  # --json: the real stdout, for the JSON lines alone (json_stdout)

    def show(event: EngineEvent) -> None:
        if args.json:
            print(event_to_json(event), file=json_out, flush=True)
            return
        progress.event(event)
        if isinstance(event, AgentStepEvent) and event.step.kind in STREAMED_TEXT:
            if answer.wants(event.step):
                answer.streamed(event.step)  # redacted also when a key is split
                progress.broken_line = not answer.at_line_start
        elif isinstance(event, AgentStepEvent) and event.step.kind == "model_call":
            if answer.wants(event.step):  # the request's own turn (re)calls its model
                answer.model_call()
        elif isinstance(event, MessageAppended) and event.message.type is MessageType.USER_INPUT:
            # How the Guide routed it, on stderr: stdout stays the answer alone.
            route = event.message.payload.get("route")
            if isinstance(route, dict):
                answer.routed_to(route.get("target"))
                print(describe_route(route), file=sys.stderr, flush=True)
        step = event.step if isinstance(event, AgentStepEvent) else None
        if step is not None and step.kind in TOOL_STEPS and answer.wants(step):
            answer.tool_step(step)  # one line on stderr per tool call
        if isinstance(event, AgentStepEvent) and event.step.kind == "tool_result":
            refused = approval_refusal(event.step.data.get("content"))
            if refused:
                progress.refused += 1
                print(f"sylk: {refused}", file=sys.stderr, flush=True)
        elif isinstance(event, IndexProgress) and event.phase in ("ready", "failed"):
            what = f"indexed {event.total} files in {event.seconds:.1f}s"
            print(f"· {what if event.phase == 'ready' else event.error}", file=sys.stderr)

    async def body(engine: Engine) -> int:
        session_id = await run_session(engine, args.session)
        engine.events.add_listener(show)
        answer.use(engine.redactor)
        progress.use(engine.redactor)
        try:
            recorded = await engine.submit(session_id, text)
        except ArchiveWriteError as exc:  # answered, maybe, but not stored: print and say so
            answer.end()
            return report_not_saved(exc, engine.redactor, streamed=answer.printed,
                                    as_json=args.json, json_out=json_out)  # fmt: skip
        answer.end()
        said = _finish(recorded[-1] if recorded else None, streamed=not args.json)
        flags = f"--script {shlex.quote(args.script)}" if args.script else ""
        asks = sys.stdin.isatty() and not args.yes and not args.json
        planned = await follow_plans(engine, session_id, progress, flags=flags,
                                     confirm=ask_at_terminal if asks else None)  # fmt: skip
        return said if planned is None or said != EXIT_OK else planned

    if not args.json:
        return asyncio.run(with_engine(args, body, settings))
    with json_stdout():  # json_out keeps the real stdout
        return asyncio.run(with_engine(args, body, settings))


def _finish(reply: Message[dict[str, object]] | None, *, streamed: bool) -> int:
    """Print what was not streamed, and turn the reply into an exit code."""
    if reply is None:
        return EXIT_OK
    text = str(reply.payload.get("text", ""))
    if reply.type is MessageType.AGENT_REPLY and reply.payload.get("answered_from"):
        print(text)  # answered from the index, chronicle or library: nothing was streamed
        return EXIT_OK
    if reply.type is MessageType.AGENT_REPLY:
        if streamed:
            print()
        return turn_exit(reply.payload)  # truncated, stopped, failed; estimated tokens
    if reply.payload.get("offline"):
        print(text, file=sys.stderr)
        return EXIT_OFFLINE
    if reply.payload.get("error"):
        print(f"sylk: error: {text}", file=sys.stderr)
        return EXIT_ERROR
    if streamed:
        print(text)
    return EXIT_OK


def cmd_route(args: argparse.Namespace) -> int:
    async def body(engine: Engine) -> int:
        decision = await engine.route(" ".join(args.text))
        if args.json:
            print(decision.model_dump_json(indent=2))
            return EXIT_OK
        fields = [
            ("target", decision.target.value),
            ("tier", decision.tier),
            ("intent", decision.intent),
            ("subject", decision.subject),
            ("time scope", decision.time_scope),
            ("confidence", f"{decision.confidence:.2f}"),
            ("command", decision.command),
            ("sent", decision.text),
            ("latency", f"{decision.latency_us:.0f} µs"),
        ]
        for name, value in fields:
            if value not in (None, ""):
                print(f"{name:>11}: {value}")
        return EXIT_OK

    return asyncio.run(with_engine(args, body))
