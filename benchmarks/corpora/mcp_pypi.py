"""A corpus of the tools of real MCP servers from PyPI, listed with the official client.

The tuning counterpart of ``mcp_servers.py`` (npm, held out): the PyPI packages in
``SERVERS`` (Python MCP servers that list their tools without a real key: the reference
servers fetch, git, time and sqlite, awslabs' servers, document converters, vector and
graph databases; licences MIT or Apache-2.0, see each package's metadata) are installed
into a scratch venv outside the repo (never the project's ``.venv``) and started over
stdio with its console script, ``HOME`` in a scratch folder, placeholder credentials and
a 40 s limit; ``tools/list`` through the ``mcp`` SDK's ``ClientSession`` (this
interpreter's, not the venv's). No server here is in the npm corpus. A tool is written as
the npm builder writes it (``description`` = its description, then its ``inputSchema`` as
JSON, what plain BM25 sees) plus ``text`` and ``input_schema``, from which the benchmark
builds the op as Sylk's MCP client does (``sylk_search.make_skills``).

Queries come from each package's long description (its README, in the installed
metadata), with the npm builder's rules (``mcp_servers.readme_texts`` and ``is_copy``): a
line naming a tool gives the text after the name, the name removed, dropped when it
repeats the listed description; also dropped when it names another tool (a row listing
several, "and get_cloudwatch_metrics (CloudWatch integration)") or is a table's status
cell ("✅ Safe - Read-only").

Weakness: awslabs' READMEs (12 of the servers) often restate the listed description in
other words; a third of the servers yield no query (their README lists no tools).

    .venv/bin/python benchmarks/corpora/mcp_pypi.py --install \
        --venv /work/bench-corpora/mcp-pypi-venv --out /work/bench-corpora/mcp-pypi
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_io import tool_id, unique_queries, write_corpus
from mcp_servers import LIST_TIMEOUT_S, is_copy, list_tools, readme_texts, tool_row

FAKE = "placeholder-not-a-real-key"
AWS = {
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "AKIAPLACEHOLDER00000",
    "AWS_SECRET_ACCESS_KEY": FAKE,
    "FASTMCP_LOG_LEVEL": "ERROR",
}
# distribution -> (console script, its arguments, extra environment); "{scratch}" is a
# throw-away folder.
SERVERS: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "mcp-server-fetch": ("mcp-server-fetch", [], {}),
    "mcp-server-git": ("mcp-server-git", [], {}),
    "mcp-server-time": ("mcp-server-time", ["--local-timezone", "UTC"], {}),
    "mcp-server-sqlite": ("mcp-server-sqlite", ["--db-path", "{scratch}/db.sqlite"], {}),
    "markitdown-mcp": ("markitdown-mcp", [], {}),
    "excel-mcp-server": ("excel-mcp-server", ["stdio"], {"EXCEL_FILES_PATH": "{scratch}"}),
    "mcp-pandoc": ("mcp-pandoc", [], {}),
    "arxiv-mcp-server": ("arxiv-mcp-server", ["--storage-path", "{scratch}"], {}),
    "duckduckgo-mcp-server": ("duckduckgo-mcp-server", [], {}),
    "mcp-server-motherduck": ("mcp-server-motherduck", ["--db-path", ":memory:"], {}),
    "chroma-mcp": ("chroma-mcp", ["--client-type", "ephemeral"], {}),
    "mcp-neo4j-cypher": ("mcp-neo4j-cypher", [], {"NEO4J_PASSWORD": FAKE}),
    "mcp-server-qdrant": (
        "mcp-server-qdrant",
        [],
        {"QDRANT_LOCAL_PATH": "{scratch}/q", "COLLECTION_NAME": "notes"},
    ),
    "awslabs.ecs-mcp-server": ("ecs-mcp-server", [], AWS),
    **{
        f"awslabs.{name}": (f"awslabs.{name}", [], AWS)
        for name in (
            "aws-documentation-mcp-server",
            "aws-pricing-mcp-server",
            "dynamodb-mcp-server",
            "cloudwatch-mcp-server",
            "eks-mcp-server",
            "aws-serverless-mcp-server",
            "iam-mcp-server",
            "lambda-tool-mcp-server",
            "postgres-mcp-server",
            "s3-tables-mcp-server",
            "stepfunctions-tool-mcp-server",
            "cloudtrail-mcp-server",
            "prometheus-mcp-server",
        )
    },
}

_READMES = """
import json, sys
from importlib.metadata import distribution
out = {}
for name in sys.argv[1:]:
    try:
        meta = distribution(name).metadata
    except Exception:
        continue
    out[name] = {"readme": meta.get_payload() or meta.get("Description") or "",
                 "version": meta["Version"], "license": meta.get("License-Expression")
                 or meta.get("License") or ""}
print(json.dumps(out))
"""


def install(venv: Path) -> None:
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, *SERVERS], check=True)


def readmes(venv: Path) -> dict[str, dict[str, str]]:
    """Each installed distribution's README (its metadata's long description)."""
    python = str(venv / "bin" / "python")
    done = subprocess.run(
        [python, "-c", _READMES, *SERVERS], check=True, capture_output=True, text=True
    )
    loaded: dict[str, dict[str, str]] = json.loads(done.stdout)
    return loaded


def server_tools(venv: Path, dist: str, scratch: Path) -> list[dict[str, Any]]:
    script, args, extra = SERVERS[dist]
    binary = str(venv.resolve() / "bin" / script)
    command = [binary, *(a.replace("{scratch}", str(scratch)) for a in args)]
    env = {"PATH": os.environ["PATH"], "HOME": str(scratch)}
    env.update({k: v.replace("{scratch}", str(scratch)) for k, v in extra.items()})
    listed = asyncio.run(asyncio.wait_for(list_tools(command, env, scratch), LIST_TIMEOUT_S))
    return [tool_row(tool_id(dist), t) for t in listed]


def plain_request(query: str, tool_names: set[str]) -> bool:
    """False for a README line that names a tool (several tools' row, a "see also") or is
    a table's status cell ("✅ Safe - Read-only", "⚠️ High Risk - ..."): marks outside
    the Basic Multilingual Plane or in the dingbats and symbols blocks."""
    words = set(re.findall(r"[A-Za-z0-9_]+", query))
    if words & tool_names:
        return False
    return not any(ord(c) > 0xFFFF or 0x2600 <= ord(c) <= 0x27BF for c in query)


def build(venv: Path, out: Path) -> dict[str, Any]:
    texts = readmes(venv)
    tools: list[dict[str, Any]] = []
    candidates: list[tuple[str, str]] = []
    servers: dict[str, Any] = {}
    for dist in SERVERS:
        if dist not in texts:
            servers[dist] = "skipped: not installed"
            continue
        with tempfile.TemporaryDirectory(prefix="mcp-pypi-corpus-") as scratch:
            try:
                listed = server_tools(venv, dist, Path(scratch))
            except BaseException as exc:  # a server that will not list is skipped
                if isinstance(exc, KeyboardInterrupt):
                    raise
                servers[dist] = f"skipped: {type(exc).__name__}"
                continue
        made = 0
        for tool in listed:
            found = readme_texts(texts[dist]["readme"], tool["name"])
            text = next((t for t in found if not is_copy(t, tool["description"])), None)
            if text:
                candidates.append((text, tool["id"]))
                made += 1
        servers[dist] = {
            "version": texts[dist]["version"],
            "license": texts[dist]["license"][:40],
            "tools": len(listed),
            "queries": made,
        }
        tools.extend(listed)
    named = {t["name"] for t in tools if "_" in t["name"]}
    candidates = [(q, gold) for q, gold in candidates if plain_request(q, named)]
    about = {
        "source": "PyPI MCP servers, tools/list over stdio with the mcp SDK",
        "servers": servers,
        "queries": "README lines naming a tool, name removed, copies of the description dropped",
    }
    return write_corpus(out, tools, unique_queries(candidates), about)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, required=True, help="a scratch venv (not .venv)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--install", action="store_true", help="pip install the servers first")
    args = parser.parse_args()
    if args.install:
        install(args.venv)
    summary = build(args.venv, args.out)
    print(json.dumps(summary["servers"], indent=1))
    print(json.dumps({"n_tools": summary["n_tools"], "n_queries": summary["n_queries"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
