"""The code index never holds Sylk's own data, even when its data dir lies in the workspace.

The index stores the text of every file it walks, and answers searches from
it; a data dir inside the workspace (the log, a config) must not become
searchable text. The hub protects its own data dir; the index and the file
watcher share the policy, so edits there are no news either.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from backend.knowledge.code.hub import CodeKnowledgeHub
from backend.knowledge.code.index import CodeIndex

SECRET = "sk-ant-SECRET0123"


def project(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    for rel, text in {
        "app.py": "def main():\n    return 1\n",
        "sylk-data/sylk.log": f"key {SECRET}\n",
        "sylk-data/sessions/notes.md": f"# notes\n{SECRET}\n",
        "conf/sylk.toml": f'api_key = "{SECRET}"\n',
    }.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws.resolve()


def test_the_index_skips_protected_paths_on_build_and_update(tmp_path: Path) -> None:
    ws = project(tmp_path)
    index = CodeIndex(ws, tmp_path / "i.db", protected=[ws / "sylk-data", ws / "conf/sylk.toml"])
    stats = index.build()
    assert stats.files == 1 and index.file_count() == 1
    assert index.search("SECRET0123") == [] and index.search("key") == []
    assert index.update_files(["sylk-data/sylk.log", "conf/sylk.toml"]) == 0
    assert index.policy.view().ignores("sylk-data/sessions", is_dir=True)
    assert index.file_count() == 1


async def test_the_hub_never_indexes_its_own_data_dir(tmp_path: Path) -> None:
    ws = project(tmp_path)
    hub = CodeKnowledgeHub(ws / "sylk-data", watch=False)
    try:
        knowledge = await hub.get(ws)
        await asyncio.wait_for(knowledge.wait_ready(), 20)
        paths = {hit.path for hit in knowledge.index.search("notes")}
        assert not any(p.startswith("sylk-data/") for p in paths)
        # The index's own database sits in the data dir, inside the workspace: not walked.
        assert knowledge.index.file_count() == 2  # app.py and conf/sylk.toml (not protected here)
    finally:
        await hub.aclose()
