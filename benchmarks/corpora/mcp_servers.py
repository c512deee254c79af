"""A corpus of the tools of real MCP servers from npm, listed with the official client.

Source: the npm packages in ``SERVERS`` (their licences are MIT or Apache-2.0; see each
package.json), installed with ``npm install --ignore-scripts`` into a scratch folder
outside the repo and started over stdio, each with throw-away placeholder credentials,
``HOME`` in a scratch folder and a 40 s limit; ``tools/list`` through the ``mcp`` SDK's
``ClientSession``. A server that does not list (it needs a real key, a browser, a
cluster) is skipped and recorded. A tool: id ``<package>_<tool>``, name = the tool's
name, description = its description, then its ``inputSchema`` as JSON.

Queries come from each package's README and the Markdown under its ``docs`` folders: a
line that names a tool (``- **read_file**: ...``, ``| `read_file` | ... |``, a table row
whose first cell is a category and a later one the tool, a ``### read_file`` heading and
its next line) gives the text after the name, with the name removed. It is dropped when
it repeats the tool's listed description (one contains the other, or they share 70% of
their words): what is left is the README author's own wording for the tool.

Weakness: few queries per server, some READMEs paraphrase the description closely, and
the README's wording is still a developer's, not a user's request.

    .venv/bin/python benchmarks/corpora/mcp_servers.py --npm-dir /work/bench-corpora/npm \
        --out /work/bench-corpora/mcp-npm
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

from corpus_io import clean, schema_json, tool_id, unique_queries, write_corpus

# package -> (arguments after the package's bin, extra environment)
TOKEN = "placeholder-not-a-real-token"
SERVERS: dict[str, tuple[list[str], dict[str, str]]] = {
    "@modelcontextprotocol/server-filesystem": (["{scratch}"], {}),
    "@modelcontextprotocol/server-everything": ([], {}),
    "@modelcontextprotocol/server-memory": ([], {}),
    "@modelcontextprotocol/server-sequential-thinking": ([], {}),
    "@modelcontextprotocol/server-github": ([], {"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN}),
    "@modelcontextprotocol/server-gitlab": ([], {"GITLAB_PERSONAL_ACCESS_TOKEN": TOKEN}),
    "@modelcontextprotocol/server-puppeteer": ([], {}),
    "@modelcontextprotocol/server-redis": (["redis://127.0.0.1:1"], {}),
    "@modelcontextprotocol/server-pdf": (["--stdio"], {}),
    "@playwright/mcp": ([], {}),
    "chrome-devtools-mcp": ([], {}),
    "@notionhq/notion-mcp-server": ([], {"NOTION_TOKEN": TOKEN}),
    "@upstash/context7-mcp": ([], {}),
    "mcp-server-kubernetes": ([], {}),
    "@wonderwhy-er/desktop-commander": ([], {}),
    "@executeautomation/playwright-mcp-server": ([], {}),
    "@antv/mcp-server-chart": ([], {}),
    "@supabase/mcp-server-supabase": (["--access-token", TOKEN], {}),
    "@heroku/mcp-server": ([], {"HEROKU_API_KEY": TOKEN}),
    "@azure-devops/mcp": (["placeholder-org"], {}),
    "figma-developer-mcp": (["--figma-api-key", TOKEN, "--stdio"], {}),
    "@kimtaeyoon83/mcp-server-youtube-transcript": ([], {}),
    "mcp-server-code-runner": ([], {}),
    "@browsermcp/mcp": ([], {}),
    "@sentry/mcp-server": (["--access-token", TOKEN], {}),
}
LIST_TIMEOUT_S = 40.0


def install(npm_dir: Path) -> None:
    npm_dir.mkdir(parents=True, exist_ok=True)
    if not (npm_dir / "package.json").exists():
        (npm_dir / "package.json").write_text('{"name": "corpora", "private": true}\n')
    command = ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", *SERVERS]
    subprocess.run(command, cwd=npm_dir, check=True)


def entry(npm_dir: Path, package: str) -> Path:
    meta = json.loads((npm_dir / "node_modules" / package / "package.json").read_text())
    bins = meta.get("bin")
    script = bins if isinstance(bins, str) else next(iter((bins or {}).values()))
    return npm_dir / "node_modules" / package / script


async def list_tools(command: list[str], env: dict[str, str], cwd: Path) -> list[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    with open(os.devnull, "w") as quiet:  # noqa: ASYNC230 - opened once, before any I/O
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return list((await session.list_tools()).tools)


def server_tools(npm_dir: Path, package: str, scratch: Path) -> list[dict[str, Any]]:
    args, extra = SERVERS[package]
    command = ["node", str(entry(npm_dir, package))]
    command += [a.replace("{scratch}", str(scratch)) for a in args]
    env = {"PATH": os.environ["PATH"], "HOME": str(scratch), **extra}
    listed = asyncio.run(asyncio.wait_for(list_tools(command, env, scratch), LIST_TIMEOUT_S))
    return [tool_row(tool_id(package), t) for t in listed]


def tool_row(prefix: str, tool: Any) -> dict[str, Any]:
    """A listed tool as a corpus row: ``description`` is its description then its
    ``inputSchema`` as JSON (what plain BM25 is given); ``text`` and ``input_schema`` keep
    the two apart, so the benchmark can build the op as Sylk's MCP client does."""
    schema = dict(tool.input_schema or {})
    return {
        "id": f"{prefix}_{tool_id(tool.name)}",
        "name": tool.name,
        "description": with_schema(tool.description or "", schema),
        "text": tool.description or "",
        "input_schema": schema,
    }


def with_schema(text: str, schema: dict[str, Any]) -> str:
    properties = schema.get("properties", {})
    return clean(f"{text} Parameters:") + " " + schema_json(properties, schema.get("required", []))


def split_schema(description: str) -> tuple[str, dict[str, Any]]:
    """(text, input schema) of a row written before rows kept them apart: the text before
    the last " Parameters: {", and the JSON after it."""
    text, sep, schema = description.rpartition(" Parameters: {")
    if not sep:
        return description, {"type": "object"}
    return text, json.loads("{" + schema)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def readme_texts(readme: str, name: str) -> list[str]:
    """The README's own words about tool ``name``: the rest of each line that names it.

    In a table row, the longest later cell; after a heading or a bare list item, the next
    line (list markers stripped).
    """
    quoted = rf"(?:\*\*|`|\*\*`)?{re.escape(name)}(?:\*\*|`|`\*\*)?"
    pattern = re.compile(rf"\s*([-*]\s+|\|\s*|#+\s+|\d+\.\s+){quoted}\s*(?:\(.*?\))?(.*)")
    # A table row whose first cell is a category and a later one names the tool.
    later_cell = re.compile(rf"\s*(\|)[^|]*\|(?:[^|]*\|)*?\s*{quoted}\s*(\|.*)")
    found = []
    lines = readme.splitlines()
    for at, line in enumerate(lines):
        m = pattern.match(line) or later_cell.match(line)
        if not m:
            continue
        rest = m.group(2)
        if m.group(1).startswith("|"):
            cells = [c.strip() for c in rest.split("|")]
            text = max(cells, key=lambda c: len(re.findall(r"[A-Za-z]{3,}", c)), default="")
        else:
            text = rest.strip(" :-\u2013\u2014")
        if not text:
            following = (n.strip() for n in lines[at + 1 : at + 4] if n.strip())
            text = re.sub(r"^([-*]|\d+\.)\s+", "", next(following, ""))
        text = clean(re.sub(r"[*`|]", " ", text)).replace(name, "").strip(" :-")
        text = re.sub(r"^Title:\s*", "", text)
        if len(re.findall(r"[A-Za-z]{3,}", text)) >= 3 and not text.startswith(("#", "```")):
            found.append(text)
    return found


def package_docs(folder: Path) -> str:
    """The package's README and the Markdown under its ``docs`` folders (some servers
    document their tools there rather than in the README), joined."""
    paths = sorted(folder.glob("[Rr][Ee][Aa][Dd][Mm][Ee]*"))
    docs = folder.glob("**/docs/**/*.md")
    paths += sorted(p for p in docs if "node_modules" not in p.relative_to(folder).parts)
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in paths)


def is_copy(query: str, description: str) -> bool:
    q, d = " ".join(sorted(_words(query))), description.lower()
    a, b = _words(query), _words(description.split(" Parameters: ", maxsplit=1)[0])
    if not a or not b:
        return True
    return query.lower().strip(". ") in d or len(a & b) / len(a | b) >= 0.7 or not q


def build(npm_dir: Path, out: Path) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    candidates: list[tuple[str, str]] = []
    servers: dict[str, Any] = {}
    for package in SERVERS:
        with tempfile.TemporaryDirectory(prefix="mcp-corpus-") as scratch:
            try:
                listed = server_tools(npm_dir, package, Path(scratch))
            except BaseException as exc:  # a server that will not list is skipped
                if isinstance(exc, KeyboardInterrupt):
                    raise
                servers[package] = f"skipped: {type(exc).__name__}"
                continue
        readme = package_docs(npm_dir / "node_modules" / package)
        made = 0
        for tool in listed:
            texts = readme_texts(readme, tool["name"])
            text = next((t for t in texts if not is_copy(t, tool["description"])), None)
            if text:
                candidates.append((text, tool["id"]))
                made += 1
        servers[package] = {"tools": len(listed), "queries": made}
        tools.extend(listed)
    about = {
        "source": "npm MCP servers, tools/list over stdio with the mcp SDK",
        "servers": servers,
        "queries": "README lines naming a tool, name removed, copies of the description dropped",
    }
    return write_corpus(out, tools, unique_queries(candidates), about)


def add_schemas(out: Path) -> int:
    """Give each row of ``out/tools.jsonl`` written before rows kept them apart its
    ``text`` and ``input_schema`` (split from ``description``; the rest is unchanged)."""
    path = out / "tools.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if "input_schema" not in row:
            row["text"], row["input_schema"] = split_schema(row["description"])
    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text("".join(lines), encoding="utf-8")
    return len(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npm-dir", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--install", action="store_true", help="npm install the servers first")
    parser.add_argument(
        "--add-schemas",
        action="store_true",
        help="only give the rows of an existing --out corpus their text and input_schema",
    )
    args = parser.parse_args()
    if args.add_schemas:
        print(json.dumps({"rows": add_schemas(args.out)}))
        return 0
    if args.npm_dir is None:
        parser.error("--npm-dir is required to build")
    if args.install:
        install(args.npm_dir)
    summary = build(args.npm_dir, args.out)
    print(json.dumps(summary["servers"], indent=1))
    print(json.dumps({"n_tools": summary["n_tools"], "n_queries": summary["n_queries"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
