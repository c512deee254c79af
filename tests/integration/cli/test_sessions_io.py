"""`sylk sessions export|import`: every format carries the session and no secret; JSON goes
back into another data dir whole; a bad file or a clash is one error line, nothing written."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from sylk_tui.export.document import EXPORT_VERSION
from sylk_tui.export.formats import FORMATS
from sylk_tui.export.markdown import to_markdown
from sylk_tui.export.scrubbing import Scrubber
from sylk_tui.export.session_export import export_session
from tests.integration.cli.export_session_fixture import (
    BEARER,
    PLANTED,
    Planted,
    planted_session,
)
from tests.integration.cli.test_cli import sylk
from tests.support.engine_env import engine_env


@pytest.fixture
async def planted(tmp_path: Path, data_dir: Path, workspace: Path) -> Planted:
    return await planted_session(tmp_path, data_dir, workspace)


def _engine(data_dir: Path, workspace: Path, env: dict[str, str]) -> Engine:
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    return Engine.from_parts(build(config, load_config(None, env=engine_env(env))))


async def test_every_format_carries_the_session_and_not_one_secret(
    planted: Planted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", planted.env["MY_SERVICE_TOKEN"])
    engine = _engine(planted.data_dir, planted.workspace, planted.env)
    try:
        raw = to_markdown(planted.session, await engine.transcript(planted.session.id))
        out = {
            fmt: await export_session(engine, planted.session, fmt, data_dir=planted.data_dir)  # type: ignore[arg-type]
            for fmt in FORMATS
        }
    finally:
        await engine.aclose()
    assert BEARER in raw  # the archive holds it: only the export's scrubbing keeps it out
    for fmt, text in out.items():
        assert [s for s in PLANTED if s in text] == [], fmt
    md, page, svg = out["md"], out["html"], out["svg"]
    assert "## Plan p1 · v1 · approved" in md and "- `e1` (engineer) · after t1" in md
    assert "> **engineer.file.edit** `app.py` · ok" in md and "+x = 2" in md
    assert "Authorization: Bearer [redacted]" in md
    document = json.loads(out["json"])
    assert document["version"] == EXPORT_VERSION and document["plans"][0]["plan_id"] == "p1"
    assert {s["role"] for s in document["steps"]} >= {"architect", "engineer"}
    # HTML: self-contained, and the session's name is text, never markup.
    assert "planted &lt;b&gt;&amp;&lt;/b&gt;" in page and "<b>" not in page
    assert "engineer.file.edit" in page and "+x = 2" in page
    for outside in ("<script", "src=", "<link", "url(", "@import", "http://", "https://"):
        assert outside not in page.lower(), outside
    assert svg.startswith("<svg") and 'url("http' not in svg and "engineer.file.edit" in svg


async def test_json_round_trip_into_another_data_dir_and_a_copy_into_the_same(
    planted: Planted, tmp_path: Path
) -> None:
    common: dict[str, Any] = {
        "data_dir": planted.data_dir,
        "workspace": planted.workspace,
        "env": planted.env,
    }
    file = tmp_path / "session.json"
    sid = planted.session.id
    exported = sylk("sessions", "export", sid[:8], "--format", "json", "-o", str(file), **common)
    assert exported.returncode == 0, exported.stderr
    other = tmp_path / "other"
    imported = sylk("sessions", "import", str(file), data_dir=other, workspace=planted.workspace)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.split("\t")[0] == sid

    before = _engine(planted.data_dir, planted.workspace, planted.env)
    after = _engine(other, planted.workspace, {})
    try:
        old, new = await before.transcript(sid), await after.transcript(sid)
        scrub = Scrubber.for_export(before.redactor, data_dir=planted.data_dir, environ=planted.env)
        assert [(m.id, m.type, m.payload.get("text")) for m in new] == [
            (m.id, m.type, scrub.text(str(m.payload.get("text")))) for m in old
        ]  # the same, secrets scrubbed
        plans = [await e.plans(sid) for e in (before, after)]
        assert [(p.plan_id, p.version, p.status, p.document) for p in plans[0]] == [
            (p.plan_id, p.version, p.status, p.document) for p in plans[1]
        ]
        assert after.usage(sid) == before.usage(sid)
        assert await after.phase_history(sid) == await before.phase_history(sid)
    finally:
        await before.aclose()
        await after.aclose()

    again = sylk("sessions", "import", str(file), **common)
    assert again.returncode == 1 and "--new-id" in again.stderr
    assert "Traceback" not in again.stderr
    copy = sylk("sessions", "import", str(file), "--new-id", **common)
    assert copy.returncode == 0, copy.stderr
    copy_id = copy.stdout.split("\t")[0]
    listed = json.loads(sylk("sessions", "list", "--json", **common).stdout)
    counts = {r["id"]: r["messages"] for r in listed}
    assert copy_id != sid and counts[copy_id] == counts[sid] > 0


def _files(tmp_path: Path) -> dict[str, Path]:
    made = {
        "not json": "{ nope",
        "not an export": json.dumps({"format": "other", "version": 1}),
        "newer": json.dumps({"format": "sylk-session", "version": EXPORT_VERSION + 1}),
        "bad session": json.dumps({"format": "sylk-session", "version": 2, "session": {}}),
        "bad rows": json.dumps({"format": "sylk-session", "version": 2,
                                "session": {"name": "x", "workspace": "/"}, "plans": "x"}),
    }  # fmt: skip
    paths = {}
    for name, text in made.items():
        paths[name] = tmp_path / f"{name.replace(' ', '_')}.json"
        paths[name].write_text(text)
    paths["missing"] = tmp_path / "missing.json"
    paths["binary"] = tmp_path / "binary.json"
    paths["binary"].write_bytes(os.urandom(64) + b"\xff")
    return paths


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("not json", "it is not JSON"),
        ("not an export", "not a sylk-session export"),
        ("newer", f"this Sylk reads up to version {EXPORT_VERSION}"),
        ("bad session", "invalid field"),
        ("bad rows", "its plans are not a list of rows"),
        ("missing", "No such file"),
        ("binary", "not UTF-8"),
    ],
)
def test_a_bad_file_is_one_error_line_and_nothing_is_written(
    case: str, said: str, tmp_path: Path, data_dir: Path, workspace: Path
) -> None:
    result = sylk("sessions", "import", str(_files(tmp_path)[case]),
                  data_dir=data_dir, workspace=workspace)  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert said in result.stderr and result.stderr.startswith("sylk: error: cannot import")
    assert "Traceback" not in result.stderr
    listed = sylk("sessions", "list", "--json", data_dir=data_dir, workspace=workspace)
    assert json.loads(listed.stdout) == []


def test_version_and_an_unknown_session(data_dir: Path, workspace: Path) -> None:
    version = sylk("--version", data_dir=data_dir, workspace=workspace)
    assert version.returncode == 0 and re.fullmatch(r"sylk \S+\n", version.stdout)
    for fmt in FORMATS:
        missing = sylk("sessions", "export", "nope", "--format", fmt,
                       data_dir=data_dir, workspace=workspace)  # fmt: skip
        assert missing.returncode == 1 and "no session matches 'nope'" in missing.stderr
        assert "Traceback" not in missing.stderr
