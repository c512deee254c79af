"""Corpora of Google API methods from the discovery documents in google-api-python-client.

Source: the ``googleapiclient/discovery_cache/documents/*.json`` files inside the
``google-api-python-client`` wheel (Apache-2.0), fetched with ``pip download --no-deps``.
One document per API is kept (its newest stable version, else its newest), and the APIs
are dealt alternately, in name order, to two corpora: ``google-a`` and ``google-b`` (so
one can be tuned on and the other held out; no API is in both).

A tool is one method: id ``drive_files_list``, name ``drive.files.list``, description =
the method's description *without its first sentence*, then its parameters as a JSON
schema (names, types, descriptions, enums), as catalogs of API functions carry them.
The query is the held-out first sentence ("Lists the user's files."): a text the index
never sees. Methods whose description is a single sentence, whose first sentence has
fewer than three words, or whose first sentence is shared by another method, give no
query (they stay in the catalog as distractors).

Weakness: a summary sentence is written by the same author as the rest of the
description, so it shares vocabulary more than a user's request would; and the rest is
sometimes thin (a note on permissions), which makes some queries hard for any ranking.

    .venv/bin/python benchmarks/corpora/google_discovery.py --wheel-dir /work/bench-corpora/pypi \
        --out /work/bench-corpora/google
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_io import clean, schema_json, split_summary, tool_id, unique_queries, write_corpus

PACKAGE = "google-api-python-client==2.202.0"
DOCUMENTS = "googleapiclient/discovery_cache/documents/"
MAX_TOOLS = 4000  # per corpus: about the size of the catalog in issue 15


def wheel(wheel_dir: Path) -> Path:
    found = sorted(wheel_dir.glob("google_api_python_client-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", PACKAGE, "-d", str(wheel_dir)],
            check=True,
        )
        found = sorted(wheel_dir.glob("google_api_python_client-*.whl"))
    return found[-1]


def _version_key(version: str) -> tuple[int, int, str]:
    stable = not re.search(r"alpha|beta", version)
    number = int(m.group(1)) if (m := re.match(r"v(\d+)", version)) else 0
    return (int(stable), number, version)


def documents(path: Path) -> dict[str, dict[str, Any]]:
    """API name -> its chosen discovery document."""
    chosen: dict[str, tuple[tuple[int, int, str], str]] = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if member.startswith(DOCUMENTS) and member.endswith(".json"):
                api, _, version = member[len(DOCUMENTS) : -len(".json")].partition(".")
                key = _version_key(version)
                if api not in chosen or key > chosen[api][0]:
                    chosen[api] = (key, member)
        return {
            api: json.loads(archive.read(member)) for api, (_, member) in sorted(chosen.items())
        }


def methods(resource: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from resource.get("methods", {}).values()
    for child in resource.get("resources", {}).values():
        yield from methods(child)


def parameter_schema(method: dict[str, Any]) -> str:
    props: dict[str, Any] = {}
    for name, spec in method.get("parameters", {}).items():
        prop = {
            "type": spec.get("type", "string"),
            "description": clean(spec.get("description", "")),
        }
        if "enum" in spec:
            prop["enum"] = spec["enum"]
        props[name] = prop
    if "request" in method:
        props["body"] = {"type": "object", "$ref": method["request"].get("$ref", "")}
    required = [n for n, s in method.get("parameters", {}).items() if s.get("required")]
    return schema_json(props, required)


def build(wheel_path: Path, out: Path) -> dict[str, Any]:
    docs = documents(wheel_path)
    corpora: dict[str, tuple[list[dict[str, Any]], list[tuple[str, str]]]] = {
        "google-a": ([], []),
        "google-b": ([], []),
    }
    for index, doc in enumerate(docs.values()):
        tools, candidates = corpora["google-a" if index % 2 == 0 else "google-b"]
        if len(tools) >= MAX_TOOLS:
            continue
        for method in methods(doc):
            name = method.get("id")
            if not name:
                continue
            summary, rest = split_summary(method.get("description", ""))
            description = f"{rest} Parameters: {parameter_schema(method)}".strip()
            tools.append({"id": tool_id(name), "name": name, "description": description})
            if rest:
                candidates.append((summary, tool_id(name)))
    summaries = {}
    for name, (tools, candidates) in corpora.items():
        about = {
            "source": f"{PACKAGE} wheel, {DOCUMENTS}*.json (Apache-2.0)",
            "apis": sorted({t["name"].split(".")[0] for t in tools}),
            "queries": "each method's first description sentence, held out of the index",
        }
        summaries[name] = write_corpus(out / name, tools, unique_queries(candidates), about)
    return summaries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.wheel_dir.mkdir(parents=True, exist_ok=True)
    summaries = build(wheel(args.wheel_dir), args.out)
    print(
        json.dumps(
            {
                k: {"n_tools": v["n_tools"], "n_queries": v["n_queries"]}
                for k, v in summaries.items()
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
