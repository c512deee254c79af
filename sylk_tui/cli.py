"""The ``sylk`` command: the TUI by default, and scriptable session commands.

Every command runs on the same Engine and data dir as the TUI. Errors the user
can cause are printed as one line on stderr with a non-zero exit, never as a
traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from backend.config.choices import MODE_NAMES
from backend.errors import SylkError
from sylk_tui import paths
from sylk_tui import repl as repl_cli
from sylk_tui.commands import archive_cli, sessions_io
from sylk_tui.commands import checkpoints as checkpoint_cli
from sylk_tui.commands import mcp as mcp_cli
from sylk_tui.commands import plan as plan_cli
from sylk_tui.commands import session_lifecycle as lifecycle_cli
from sylk_tui.commands import session_models as session_models_cli
from sylk_tui.commands.exit_codes import (
    EXIT_CODES,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    status_for,
)

if TYPE_CHECKING:  # the engine's modules load when a command needs an engine
    from backend.config.settings import SylkConfig
    from backend.engine import Engine


def sylk_version() -> str:
    """The installed package's version ("unknown" when run from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sylk-tui")
    except PackageNotFoundError:
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked (reading the
    package metadata costs every other command ~10 ms at start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_kwargs: object) -> None:
        help_text = "show program's version number and exit"
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help_text)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        print(f"sylk {sylk_version()}")
        parser.exit()


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
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sessions = commands.add_parser("sessions", help="list, create, export and import sessions")
    _common(sessions, default=argparse.SUPPRESS)
    verbs = sessions.add_subparsers(dest="verb", metavar="VERB", required=True)

    sessions_io.add_parsers(verbs, _common)
    new = verbs.add_parser("new", help="create a session")
    _common(new, default=argparse.SUPPRESS)
    new.add_argument("name", metavar="NAME")
    new.add_argument(
        "--no-isolation",
        action="store_true",
        help="work in the workspace itself, no git worktree of its own",
    )
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
    archive_cli.add_parser(commands, _common)
    plan_cli.add_parser(commands)
    repl_cli.add_parser(commands, _common)
    return parser


def _engine(args: argparse.Namespace, settings: SylkConfig | None = None) -> Engine:
    from sylk_tui.commands.engine_runs import engine_for

    return engine_for(args, settings)


def _engine_command(name: str) -> Callable[[argparse.Namespace], int]:
    """``engine_runs.cmd_<name>``, imported when the command runs (never for the TUI)."""

    def run(args: argparse.Namespace) -> int:
        from sylk_tui.commands import engine_runs

        command: Callable[[argparse.Namespace], int] = getattr(engine_runs, f"cmd_{name}")
        return command(args)

    return run


def _run_tui(args: argparse.Namespace) -> int:
    from sylk_tui.app import SylkApp  # Textual loads only when the TUI runs.
    from sylk_tui.keymap import keymap_table
    from sylk_tui.themes import THEME_FILE

    config_file = paths.config_file()

    def build() -> Engine:
        """Run by the app after its first frame: the settings are checked here, and a
        bad file is the app's start-up error, said as any other command says it."""
        from backend.config.settings import load_config

        return _engine(args, load_config(config_file))

    theme_file = paths.data_dir(args.data_dir) / THEME_FILE  # the theme chosen last time
    # The keys are read as written (tomllib) so the first frame waits for no settings
    # model; the app checks each entry (sylk_tui.keymap).
    app = SylkApp(build, keymap=keymap_table(config_file), theme_file=theme_file)
    app.run()
    if app.startup_error is not None:
        raise app.startup_error
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "list": _engine_command("list"),
        "new": _engine_command("new"),
        "export": lambda a: sessions_io.run_export(a, _engine),
        "import": sessions_io.run_import,
        "undo": lambda a: checkpoint_cli.run(a, _engine),
        "diff": lambda a: checkpoint_cli.run(a, _engine),
        **{verb: lambda a: lifecycle_cli.run(a, _engine) for verb in lifecycle_cli.VERBS},
    }
    try:
        if argv is None:  # a real `sylk` process: its imports the cheap way (not the TUI's)
            from sylk_tui.commands.quick_imports import preload

            preload(args)
        if args.command == "sessions":
            return handlers[args.verb](args)
        if args.command in ("run", "route"):
            return _engine_command(args.command)(args)
        if args.command == "mcp":
            return mcp_cli.run(args, _engine)
        if args.command == "archive":
            return archive_cli.run(args)
        if args.command == "plan":
            return plan_cli.run(args)
        if args.command == "repl":
            return repl_cli.run(args, _engine)
        return _run_tui(args)
    except SylkError as exc:
        print(f"sylk: error: {exc}", file=sys.stderr)
        return status_for(exc)
    except ValueError as exc:  # pydantic's ValidationError, loaded only if a command did
        problems = _validation_problems(exc)
        if problems is None:
            raise
        print(f"sylk: error: {problems}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"sylk: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("sylk: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _validation_problems(exc: ValueError) -> str | None:
    """A settings or argument model's errors as one line (``None``: not such an error)."""
    validation = sys.modules.get("pydantic")
    if validation is None or not isinstance(exc, validation.ValidationError):
        return None
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


if __name__ == "__main__":
    sys.exit(main())
