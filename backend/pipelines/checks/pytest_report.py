"""pytest's JUnit XML report (``-o junit_family=xunit1``), read into test failures.

The XML is the robust source: it names every test with its file and line whatever
plugins do to the terminal. xunit1 is asked for because it keeps ``file`` and ``line``
on each ``testcase`` (xunit2 drops them). Its ``line`` is 0-based (where the test
function starts); the failure's line is the test file's last frame in the trace
(``tests/test_x.py:9: AssertionError``), the line that failed. A report with a
DOCTYPE or entity is refused: pytest never writes one, and the report comes from
code under test.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from backend.pipelines.checks.assertion_values import pytest_values
from backend.pipelines.checks.paths import reported_path
from backend.pipelines.checks.results import TestFailure, ToolOutputError

MAX_TRACE = 8000  # characters of a failure's trace kept


@dataclass
class PytestCounts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: list[TestFailure] = field(default_factory=list)


def node_id(file: str, classname: str, name: str) -> str:
    """The pytest node id a testcase stands for (``tests/test_a.py::TestX::test_y[1]``)."""
    if not file:
        return f"{classname}::{name}" if classname else name
    module = file.removesuffix(".py").replace("/", ".")
    inner = classname.removeprefix(module).strip(".") if classname.startswith(module) else ""
    parts = [file, *inner.split(".")] if inner else [file]
    if classname == "" and name.replace(".", "/") + ".py" == file:
        return file  # a collection error names the module, not a test
    return "::".join([*parts, name])


def _failure_line(trace: str, file: str) -> int | None:
    if not file:
        return None
    pattern = re.compile(rf"^{re.escape(file)}:(\d+):", re.MULTILINE)
    found = pattern.findall(trace)
    return int(found[-1]) if found else None


def parse_pytest_junit(xml_text: str, workspace: Path) -> PytestCounts:
    if "<!DOCTYPE" in xml_text or "<!ENTITY" in xml_text:
        raise ToolOutputError("pytest", "the JUnit report declares a DOCTYPE or entities")
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ToolOutputError("pytest", f"the JUnit report is not XML ({exc})") from None
    counts = PytestCounts()
    for case in root.iter("testcase"):
        file = reported_path(case.get("file", ""), workspace) if case.get("file") else ""
        name = node_id(file, case.get("classname", ""), case.get("name", ""))
        start = case.get("line")
        problems = [(c.tag, c) for c in case if c.tag in ("failure", "error")]
        if not problems:
            if case.find("skipped") is not None:
                counts.skipped += 1
            else:
                counts.passed += 1
            continue
        for tag, child in problems:
            trace = (child.text or "")[-MAX_TRACE:]
            message = child.get("message", "")
            expected, actual = pytest_values(message) if tag == "failure" else (None, None)
            line = _failure_line(trace, file)
            if line is None and start is not None and start.isdigit():
                line = int(start) + 1
            counts.failures.append(
                TestFailure(
                    name=name,
                    file=file,
                    line=line,
                    message=message,
                    expected=expected,
                    actual=actual,
                    trace=trace,
                    kind=tag,
                )
            )
            if tag == "failure":
                counts.failed += 1
            else:
                counts.errors += 1
    return counts
