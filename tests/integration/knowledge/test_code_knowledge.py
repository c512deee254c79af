"""The Librarian's index, watcher and intent cache together, with real file writes."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

from backend.knowledge.code.evidence import Evidence
from backend.knowledge.code.index import CodeIndex
from backend.knowledge.code.intent_cache import Intent, concept_key, entity_key, query_key
from backend.knowledge.code.live import CodeKnowledge, IndexStatus
from backend.knowledge.watch.hashes import scan_workspace
from tests.integration.knowledge.test_file_watcher import git
from tests.support.polling import until

T = TypeVar("T")
SERVICE = '''"""Accounts."""


class AccountService:
    def open(self, name: str) -> None:
        pass


def helper() -> int:
    return 1
'''


_markers = iter(range(10**6))


async def settle(knowledge: CodeKnowledge) -> None:
    """Write a marker file and wait until its batch is applied: everything before is too.

    The index shows the marker before the batch is done (deletions and the cache's
    invalidation follow), so the batch must also have finished.
    """
    name = f"MARKER_{next(_markers)}"
    (knowledge.root / f"zz_{name.lower()}.py").write_text(f"{name} = 1\n")
    await until(
        lambda: knowledge.ready and bool(knowledge.index.locate(name)) and not knowledge.applying,
        what=f"the batch with {name} to be applied",
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "app").mkdir(parents=True)
    (root / "app" / "service.py").write_text(SERVICE)
    (root / "app" / "other.py").write_text("from app.service import AccountService\n")
    (root / "web").mkdir()
    (root / "web" / "main.ts").write_text("export class Widget {}\nexport function draw() {}\n")
    return root


@pytest.fixture
async def knowledge(workspace: Path, tmp_path: Path) -> AsyncIterator[CodeKnowledge]:
    statuses: list[IndexStatus] = []
    k = CodeKnowledge(workspace, tmp_path / "index.db", on_status=statuses.append)
    await k.start()
    await asyncio.wait_for(k.wait_ready(), 20)
    k.statuses = statuses  # type: ignore[attr-defined]
    yield k
    await k.aclose()


async def test_build_publishes_progress_and_locates(knowledge: CodeKnowledge) -> None:
    phases = [s.phase for s in knowledge.statuses]  # type: ignore[attr-defined]
    assert phases[0] == "building" and phases[-1] == "ready"
    found = await knowledge.locate("account_service", "where is AccountService defined")
    assert [(d.path, d.line, d.kind) for d in found.definitions] == [("app/service.py", 4, "class")]
    assert not found.cached


async def test_locate_is_cached_until_its_file_changes(knowledge: CodeKnowledge) -> None:
    await knowledge.locate("AccountService")
    again = await knowledge.locate("account service")  # another spelling: the same entity
    assert again.cached
    # A touch and an identical rewrite change nothing; an unrelated edit keeps the entry.
    service = knowledge.root / "app" / "service.py"
    os.utime(service)
    service.write_text(SERVICE)
    (knowledge.root / "web" / "main.ts").write_text("export class Widget {}\n")
    await settle(knowledge)
    assert knowledge.cache.peek(Intent.LOCATE, entity_key("AccountService")) is not None
    # Moving the class down three lines drops the entry; the next answer has the new line.
    service.write_text("\n\n\n" + SERVICE)
    await until(lambda: knowledge.cache.peek(Intent.LOCATE, "accountservice") is None)
    moved = await knowledge.locate("AccountService")
    assert not moved.cached and [d.line for d in moved.definitions] == [7]
    stats = knowledge.cache.stats()["LOCATE"]
    assert stats["hits"] == 1 and stats["invalidations"] == 1


async def test_a_new_definition_elsewhere_invalidates_locate(knowledge: CodeKnowledge) -> None:
    await knowledge.locate("Widget")
    (knowledge.root / "app" / "widget.py").write_text("class Widget:\n    pass\n")
    await until(lambda: knowledge.cache.peek(Intent.LOCATE, "widget") is None)
    found = await knowledge.locate("Widget")
    assert {d.path for d in found.definitions} == {"web/main.ts", "app/widget.py"}


async def test_atomic_replace_rename_and_delete(knowledge: CodeKnowledge) -> None:
    root = knowledge.root
    await knowledge.locate("helper")
    tmp = root / "app" / ".service.py.tmp"
    tmp.write_text(SERVICE.replace("def helper", "def helper_two"))
    os.replace(tmp, root / "app" / "service.py")  # an editor's temp-then-rename save
    await until(lambda: knowledge.cache.peek(Intent.LOCATE, "helper") is None)
    assert (await knowledge.locate("helper")).definitions == []
    assert [d.name for d in (await knowledge.locate("helper_two")).definitions] == ["helper_two"]

    await knowledge.locate("draw")
    os.rename(root / "web" / "main.ts", root / "web" / "canvas.ts")
    await until(lambda: knowledge.cache.peek(Intent.LOCATE, "draw") is None)
    assert [d.path for d in (await knowledge.locate("draw")).definitions] == ["web/canvas.ts"]

    (root / "web" / "canvas.ts").unlink()
    await settle(knowledge)
    assert (await knowledge.locate("draw")).definitions == []


async def test_pattern_entries_drop_on_structural_change(knowledge: CodeKnowledge) -> None:
    first = await knowledge.patterns("account service")
    assert first.snippets and not first.cached
    assert (await knowledge.patterns("account_service")).cached
    (knowledge.root / "app" / "billing.py").write_text("class Billing:\n    pass\n")
    await until(lambda: knowledge.cache.peek(Intent.PATTERN, "accountservice") is None)


async def test_explain_gives_source_and_expires(workspace: Path, tmp_path: Path) -> None:
    now = [0.0]
    from backend.knowledge.code.intent_cache import IntentCache

    k = CodeKnowledge(workspace, tmp_path / "i.db", watch=False, cache=IntentCache(lambda: now[0]))
    await k.start()
    await asyncio.wait_for(k.wait_ready(), 20)
    try:
        explained = await k.explain("AccountService")
        assert "def open(self, name: str)" in explained.snippets[0].text
        assert (await k.explain("AccountService")).cached
        now[0] += 31 * 60  # the seed's 30-minute TTL
        assert not (await k.explain("AccountService")).cached
        assert k.cache.stats()["EXPLAIN"]["expirations"] == 1
    finally:
        await k.aclose()


ZEBRA = '''

class Zebra:
    """Zebra stripes."""

    def retry(self) -> None:
        """Retry with backoff."""
'''


async def test_an_edit_that_adds_the_subject_drops_nothing_found_answers(
    knowledge: CodeKnowledge,
) -> None:
    keys = {
        Intent.LOCATE: entity_key("Zebra"),
        Intent.EXPLAIN: entity_key("Zebra"),
        Intent.PATTERN: concept_key("retry backoff"),
        Intent.GENERAL: query_key("list the zebra stripes"),
    }

    async def ask_all() -> list[Evidence]:
        return [
            await knowledge.locate("Zebra"),
            await knowledge.explain("Zebra"),
            await knowledge.patterns("retry backoff"),
            await knowledge.general("list the zebra stripes"),
        ]

    assert all(not (e.definitions or e.snippets) for e in await ask_all())
    assert all(knowledge.cache.peek(i, k) is not None for i, k in keys.items())
    # An edit to an existing file (no file added, none of the answers quoted it).
    service = knowledge.root / "app" / "service.py"
    service.write_text(SERVICE + ZEBRA)
    await until(lambda: all(knowledge.cache.peek(i, k) is None for i, k in keys.items()))
    located, explained, patterns, general = await ask_all()
    assert not any(e.cached for e in (located, explained, patterns, general))
    assert [(d.path, d.line) for d in located.definitions] == [("app/service.py", 13)]
    assert explained.definitions and "Zebra stripes" in explained.snippets[0].text
    assert {s.path for s in patterns.snippets} == {"app/service.py"}
    assert {s.path for s in general.snippets} == {"app/service.py"}


async def test_a_mention_in_another_file_drops_the_answers_that_searched_for_it(
    knowledge: CodeKnowledge,
) -> None:
    await knowledge.explain("AccountService")
    await knowledge.patterns("account service")
    await knowledge.locate("AccountService")
    main = knowledge.root / "web" / "main.ts"
    main.write_text("export class Widget {}\nexport function draw() { return 1 }\n")
    await settle(knowledge)  # an edit that mentions neither keeps every answer
    assert knowledge.cache.peek(Intent.EXPLAIN, "accountservice") is not None
    assert knowledge.cache.peek(Intent.PATTERN, concept_key("account service")) is not None
    main.write_text("// opens an account through AccountService\nexport class Widget {}\n")
    await until(lambda: knowledge.cache.peek(Intent.EXPLAIN, "accountservice") is None)
    assert knowledge.cache.peek(Intent.PATTERN, concept_key("account service")) is None
    # A location with definitions depends on definitions only: a mention keeps it.
    assert knowledge.cache.peek(Intent.LOCATE, "accountservice") is not None
    explained = await knowledge.explain("AccountService")
    assert "web/main.ts" in {s.path for s in explained.snippets}


class Paused(Generic[T]):
    """Wraps a step that runs in a worker thread: it does its work, then waits for the
    test to release it, so the test decides what happens in between."""

    def __init__(self, step: Callable[..., T]) -> None:
        self._step = step
        self.computed = threading.Event()
        self.release = threading.Event()

    def __call__(self, *args: Any) -> T:
        result = self._step(*args)
        self.computed.set()
        if not self.release.wait(timeout=30):
            raise AssertionError("the test never released the step")
        return result


async def test_an_answer_read_before_an_edit_is_not_cached_after_it(
    knowledge: CodeKnowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = Paused(knowledge._locate)
    monkeypatch.setattr(knowledge, "_locate", paused)
    query = asyncio.create_task(knowledge.locate("AccountService"))
    await asyncio.to_thread(paused.computed.wait, 30)
    before = knowledge.batches_applied
    (knowledge.root / "app" / "service.py").write_text("\n\n\n" + SERVICE)
    await until(lambda: knowledge.batches_applied > before)  # invalidation has run
    paused.release.set()
    answered = await query
    assert [d.line for d in answered.definitions] == [4]  # computed from the old index
    assert knowledge.cache.peek(Intent.LOCATE, "accountservice") is None  # so never cached
    fresh = await knowledge.locate("AccountService")
    assert not fresh.cached and [d.line for d in fresh.definitions] == [7]


async def test_an_answer_put_while_the_update_runs_is_not_cached(
    knowledge: CodeKnowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The put lands after the index changed but before the batch's invalidation."""
    query_step = Paused(knowledge._explain)
    monkeypatch.setattr(knowledge, "_explain", query_step)
    update_step = Paused(knowledge._update)
    monkeypatch.setattr(knowledge, "_update", update_step)
    query = asyncio.create_task(knowledge.explain("AccountService"))
    await asyncio.to_thread(query_step.computed.wait, 30)
    (knowledge.root / "app" / "service.py").write_text(SERVICE.replace("pass", "return None"))
    await asyncio.to_thread(update_step.computed.wait, 30)  # the index holds the new text
    query_step.release.set()
    assert "pass" in (await query).snippets[0].text
    assert knowledge.cache.peek(Intent.EXPLAIN, "accountservice") is None
    update_step.release.set()
    await settle(knowledge)
    assert knowledge.cache.peek(Intent.EXPLAIN, "accountservice") is None
    fresh = await knowledge.explain("AccountService")
    assert not fresh.cached and "return None" in fresh.snippets[0].text


IGNORED_BY_DEFAULT = (
    ".vscode/settings.json",
    "vendor/lib/lib.go",
    ".cache/tool/state.py",
    "build/gen.py",
    "dist/bundle.js",
    "node_modules/m/index.js",
)


async def test_writes_into_ignored_directories_change_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".gitignore").write_text("out/\n")
    for rel in IGNORED_BY_DEFAULT:
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text("class Hidden:\n    pass\n")
    statuses: list[IndexStatus] = []
    k = CodeKnowledge(workspace, tmp_path / "index.db", on_status=statuses.append)
    await k.start()
    await asyncio.wait_for(k.wait_ready(), 20)
    try:
        indexed = {row[0] for row in k.index.reader().execute("SELECT path FROM files")}
        assert indexed == {".gitignore", "app/service.py", "app/other.py", "web/main.ts"}
        assert k.watcher is not None and set(k.watcher.known_hashes) == indexed
        await k.locate("AccountService")
        statuses.clear()
        for directory in ("out", "build"):  # a build writing its output, 150 files each
            (workspace / directory).mkdir(exist_ok=True)
            for i in range(150):
                (workspace / directory / f"chunk{i}.js").write_text(f"class Hidden{i} {{}}\n")
        (workspace / ".vscode" / "settings.json").write_text('{"editor.tabSize": 2}\n')
        before = k.batches_applied
        await settle(k)
        assert k.batches_applied == before + 1  # the marker alone
        assert "rebuilding" not in [s.phase for s in statuses]
        assert k.cache.peek(Intent.LOCATE, "accountservice") is not None
        assert k.cache.stats()["LOCATE"]["invalidations"] == 0
        assert k.index.locate("Hidden") == [] and k.index.locate("Hidden7") == []
        assert not any(p.startswith(("out/", "build/")) for p in k.watcher.known_hashes)
    finally:
        await k.aclose()


async def test_editing_a_gitignore_rewalks_what_it_hides_and_shows(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel, text in {
        ".gitignore": "gen/\n",
        "gen/made.py": "class Generated:\n    pass\n",
        "src.py": "class Real:\n    pass\n",
        "sub/kept.py": "class Kept:\n    pass\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    k = CodeKnowledge(root, tmp_path / "live.db")
    await k.start()
    await asyncio.wait_for(k.wait_ready(), 20)

    async def same_as_a_fresh_build() -> None:
        await settle(k)
        fresh = CodeIndex(root, tmp_path / f"fresh{next(_markers)}.db")
        await asyncio.to_thread(fresh.build)
        assert _rows(k.index) == _rows(fresh)
        fresh.close()
        assert k.watcher is not None
        assert k.watcher.known_hashes == scan_workspace(root)

    try:
        assert (await k.locate("Generated")).definitions == []
        assert [d.path for d in (await k.locate("Real")).definitions] == ["src.py"]
        assert (await k.explain("Real")).definitions
        (root / ".gitignore").write_text("src.py\n")  # shows gen/, hides src.py
        await until(lambda: bool(k.index.locate("Generated")) and not k.index.locate("Real"))
        await same_as_a_fresh_build()
        for entity in ("Generated", "Real"):
            assert k.cache.peek(Intent.LOCATE, entity_key(entity)) is None
        assert k.cache.peek(Intent.EXPLAIN, "real") is None
        generated = await k.locate("Generated")
        assert [d.path for d in generated.definitions] == ["gen/made.py"]
        assert (await k.locate("Real")).definitions == []
        assert (await k.explain("Real")).definitions == []

        (root / "sub" / ".gitignore").write_text("kept.py\n")  # a nested one, added
        await until(lambda: not k.index.locate("Kept"))
        await same_as_a_fresh_build()
        (root / "sub" / ".gitignore").unlink()  # and removed
        await until(lambda: bool(k.index.locate("Kept")))
        await same_as_a_fresh_build()
    finally:
        await k.aclose()


def _rows(index: CodeIndex) -> tuple[set[tuple[str, str]], set[tuple[str, str, int]]]:
    conn = index.reader()
    files = set(conn.execute("SELECT path, hash FROM files"))
    symbols = set(conn.execute("SELECT name, path, line FROM symbols"))
    return files, symbols


def _answer(k: CodeKnowledge, intent: Intent, subject: str) -> Evidence:
    """What the index says now, past the cache."""
    compute = {
        Intent.LOCATE: lambda s: k._locate(s, ""),
        Intent.EXPLAIN: k._explain,
        Intent.PATTERN: k._patterns,
        Intent.GENERAL: k._general,
    }[intent]
    return compute(subject)


async def assert_no_stale_entries(k: CodeKnowledge) -> int:
    """Every cached answer equals the one the index gives now; returns how many there are."""
    seen = 0
    for intent in Intent:
        for key in list(k.cache._stores[intent].entries):
            entry = k.cache.peek(intent, key)
            assert entry is not None
            cached: Evidence = entry.value
            now = await asyncio.to_thread(_answer, k, intent, cached.subject)
            assert (cached.definitions, cached.snippets) == (now.definitions, now.snippets), key
            seen += 1
    return seen


async def ask_everything(k: CodeKnowledge, ds: range, i: int) -> None:
    """Cache an answer of every intent about ``fn_{d}_{i}`` for each ``d``."""
    for d in ds:
        await k.locate(f"fn_{d}_{i}")
        await k.explain(f"fn_{d}_{i}")
    await k.patterns("moved")
    await k.general("moved functions")


def _git_repo(repo: Path) -> None:
    """``main``: 2,000 one-function modules; ``other``: each function two lines lower."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for d in range(20):
        (repo / f"pkg{d:02}").mkdir()
        for i in range(100):
            (repo / f"pkg{d:02}" / f"m{i:03}.py").write_text(f"def fn_{d}_{i}():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main")
    git(repo, "checkout", "-q", "-b", "other")
    for d in range(20):
        for i in range(100):
            body = f"# moved\n\ndef fn_{d}_{i}():\n    pass\n"
            (repo / f"pkg{d:02}" / f"m{i:03}.py").write_text(body)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "other")
    git(repo, "checkout", "-q", "main")


@pytest.mark.slow
async def test_git_checkout_leaves_no_stale_rows_or_entries(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _git_repo(repo)
    statuses: list[IndexStatus] = []
    k = CodeKnowledge(repo, tmp_path / "live.db", on_status=statuses.append)
    await k.start()
    await asyncio.wait_for(k.wait_ready(), 60)
    try:
        await ask_everything(k, range(0, 20, 4), 7)
        assert [h.line for h in (await k.locate("fn_0_7")).definitions] == [1]
        assert not (await k.patterns("moved")).snippets  # nothing moved on main
        assert {i: len(k.cache._stores[i].entries) for i in Intent} == {
            Intent.LOCATE: 5,
            Intent.EXPLAIN: 5,
            Intent.PATTERN: 1,
            Intent.GENERAL: 1,
        }

        # A 2,000-file checkout: a bulk change, the index rebuilt, the cache started afresh.
        await asyncio.to_thread(git, repo, "checkout", "-q", "other")
        await until(lambda: k.status.phase == "rebuilding" or not k.ready)
        await settle(k)
        fresh = CodeIndex(repo, tmp_path / "fresh.db")
        await asyncio.to_thread(fresh.build)
        assert _rows(k.index) == _rows(fresh)  # zero stale index rows
        fresh.close()
        await assert_no_stale_entries(k)  # what was cached before the checkout is gone
        await ask_everything(k, range(0, 20, 4), 7)
        assert [h.line for h in (await k.locate("fn_0_7")).definitions] == [3]
        assert (await k.explain("fn_4_7")).snippets[0].line == 3
        assert len((await k.patterns("moved")).snippets) == 10
        assert await assert_no_stale_entries(k) == 12

        # Five files back to main's version at once: a small batch, handled entry by entry.
        await ask_everything(k, range(5), 9)
        statuses.clear()
        five = [f"pkg{d:02}/m009.py" for d in range(5)]
        await asyncio.to_thread(git, repo, "checkout", "-q", "main", "--", *five)
        await until(lambda: all(k.index.locate(f"fn_{d}_9")[0].line == 1 for d in range(5)))
        await settle(k)
        assert "rebuilding" not in {s.phase for s in statuses}
        for d in range(5):
            assert k.cache.peek(Intent.LOCATE, entity_key(f"fn_{d}_9")) is None
            assert k.cache.peek(Intent.EXPLAIN, entity_key(f"fn_{d}_9")) is None
        assert k.cache.peek(Intent.LOCATE, entity_key("fn_4_7")) is not None  # untouched
        assert await assert_no_stale_entries(k) > 0
        assert [h.line for h in (await k.locate("fn_3_9")).definitions] == [1]
    finally:
        await k.aclose()
