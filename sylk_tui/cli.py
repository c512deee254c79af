"""The ``sylk`` command: the TUI by default, and scriptable session commands.

Every command runs on the same Engine and data dir as the TUI. Errors the user
can cause are printed as one line on stderr with a non-zero exit, never as a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError

from backend.config.approvals import MODE_NAMES
from backend.config.settings import SylkConfig, load_config
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
from sylk_tui import repl as repl_cli
from sylk_tui.commands import checkpoints as checkpoint_cli
from sylk_tui.commands import mcp as mcp_cli
from sylk_tui.commands import plan as plan_cli
from sylk_tui.commands import session_lifecycle as lifecycle_cli
from sylk_tui.commands import session_models as session_models_cli
from sylk_tui.commands import sessions_io
from sylk_tui.commands.run_output import (
    EXIT_CODES,
    EXIT_NOT_SAVED,
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

if TYPE_CHECKING:  # the engine's modules load when a command needs an engine
    from backend.engine import Engine


def sylk_version() -> str:
    """The installed package's version ("unknown" when run from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sylk-tui")
    except PackageNotFoundError:
        return "unknown"


EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_OFFLINE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _common(parser: argparse.ArgumentParser, *, default: object) -> None:
    parser.add_argument(
        "--data-dir",
        default=default,
        metavar="DIR",
        help="where the archive lives (default: $SYLK_DATA_DIR or the user data dir)",
    )
    parser.add_argument(
        "--workspace",
        default=default,
        metavar="DIR",
        help="the directory agents work in (default: the current directory)",
    )


def add_approval_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--approval",
        choices=MODE_NAMES,
        metavar="MODE",
        help="approval mode for this run, over the session's: read-only, ask, auto-edit "
        "(edits go ahead, commands ask) or auto (sandboxed commands too)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sylk", description="Run many coding-agent sessions at once, from one terminal."
    )
    _common(parser, default=None)
    parser.add_argument("--version", action="version", version=f"sylk {sylk_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sessions = commands.add_parser("sessions", help="list, create, export and import sessions")
    _common(sessions, default=argparse.SUPPRESS)
    verbs = sessions.add_subparsers(dest="verb", metavar="VERB", required=True)

    sessions_io.add_parsers(verbs, _common)
    new = verbs.add_parser("new", help="create a session")
    _common(new, default=argparse.SUPPRESS)
    new.add_argument("name", metavar="NAME")
    session_models_cli.add_flags(new)

    run = commands.add_parser(
        "run",
        help="send one request through the engine, headless",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(run, default=argparse.SUPPRESS)
    run.add_argument("--session", metavar="NAME", help="session to use (created if missing)")
    run.add_argument(
        "--provider", help="anthropic, openai, scripted, offline or a configured provider name"
    )
    run.add_argument("--model", help="model name for this request")
    run.add_argument(
        "--script",
        metavar="FILE",
        help="the scripted model's turns (JSON or YAML; implies --provider scripted)",
    )
    run.add_argument("--json", action="store_true", help="print engine events as JSON lines")
    add_approval_flag(run)
    run.add_argument(
        "--yes",
        action="store_true",
        help="approve every edit, command and plan that would ask (never a read-only refusal "
        "or a deny rule); without it, nothing here can approve, so such calls are refused "
        "and a plan waits for /plan approve",
    )
    run.add_argument("text", nargs="+", metavar="TEXT", help="the request")

    route = commands.add_parser("route", help="show how the Guide would route a request")
    _common(route, default=argparse.SUPPRESS)
    route.add_argument("--provider", help="provider for the model tier (default: as configured)")
    route.add_argument("--json", action="store_true", help="print the decision as JSON")
    route.add_argument("text", nargs="+", metavar="TEXT", help="the request")

    checkpoint_cli.add_parsers(verbs, _common)
    lifecycle_cli.add_parsers(verbs, _common)
    mcp_cli.add_parser(commands, _common)
    plan_cli.add_parser(commands)
    repl_cli.add_parser(commands, _common)
    return parser


def _engine(args: argparse.Namespace, settings: SylkConfig | None = None) -> Engine:
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


async def _with_engine(
    args: argparse.Namespace,
    body: Callable[[Engine], Awaitable[int]],
    settings: SylkConfig | None = None,
) -> int:
    engine = _engine(args, settings)
    try:
        return await body(engine)
    except SylkError as exc:  # said here, where the engine's redactor can scrub it
        print(f"sylk: error: {engine.redactor.text(str(exc))}", file=sys.stderr)
        return EXIT_NOT_SAVED if isinstance(exc, ArchiveWriteError) else EXIT_ERROR
    finally:
        await engine.aclose()


def _cmd_list(args: argparse.Namespace) -> int:
    return asyncio.run(_with_engine(args, lambda e: sessions_io.list_sessions(e, args.json)))


def _cmd_new(args: argparse.Namespace) -> int:
    async def body(engine: Engine) -> int:
        session = await session_models_cli.create(engine, args)
        print(f"{session.id}\t{session.name}")
        return EXIT_OK

    return asyncio.run(_with_engine(args, body))


def _cmd_run(args: argparse.Namespace) -> int:
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
        return asyncio.run(_with_engine(args, body, settings))
    with json_stdout():  # json_out keeps the real stdout
        return asyncio.run(_with_engine(args, body, settings))


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


def _cmd_route(args: argparse.Namespace) -> int:
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

    return asyncio.run(_with_engine(args, body))


def _run_tui(args: argparse.Namespace) -> int:
    from sylk_tui.app import SylkApp  # Textual loads only when the TUI runs.

    settings = load_config(paths.config_file())  # once: the engine's and the keys'
    # The engine is built by the app after its first frame is drawn.
    from sylk_tui.themes import THEME_FILE

    theme_file = paths.data_dir(args.data_dir) / THEME_FILE  # the theme chosen last time
    app = SylkApp(lambda: _engine(args, settings), keymap=settings.keymap, theme_file=theme_file)
    app.run()
    if app.startup_error is not None:
        raise app.startup_error
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "list": _cmd_list,
        "new": _cmd_new,
        "export": lambda a: sessions_io.run_export(a, _engine),
        "import": sessions_io.run_import,
        "undo": lambda a: checkpoint_cli.run(a, _engine),
        "diff": lambda a: checkpoint_cli.run(a, _engine),
        **{verb: lambda a: lifecycle_cli.run(a, _engine) for verb in lifecycle_cli.VERBS},
    }
    try:
        if args.command == "sessions":
            return handlers[args.verb](args)
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "route":
            return _cmd_route(args)
        if args.command == "mcp":
            return mcp_cli.run(args, _engine)
        if args.command == "plan":
            return plan_cli.run(args)
        if args.command == "repl":
            return repl_cli.run(args, _engine)
        return _run_tui(args)
    except SylkError as exc:
        print(f"sylk: error: {exc}", file=sys.stderr)
        return EXIT_NOT_SAVED if isinstance(exc, ArchiveWriteError) else EXIT_ERROR
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        print(f"sylk: error: {problems}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"sylk: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("sylk: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
