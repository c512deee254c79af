"""The code index on a real multi-language tree and a real SQLite sidecar."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.knowledge.code.index import CodeIndex
from backend.knowledge.code.index_db import PathOutsideRootError

FILES = {
    ".gitignore": "*.log\nsecret/\ngen/**\n!gen/keep.py\n",
    "app/__init__.py": "",
    "app/models.py": (
        '"""Models."""\n'
        "\n"
        "MAX_USERS = 10\n"
        "\n"
        "\n"
        "class UserAccount:\n"
        "    def save(self) -> None:\n"
        "        pass\n"
        "\n"
        "    async def load(self) -> None:\n"
        "        pass\n"
        "\n"
        "\n"
        "def make_user() -> UserAccount:\n"
        "    return UserAccount()\n"
    ),
    "app/service.py": (
        "import os\n"
        "from app.models import UserAccount\n"
        "from . import models\n"
        "\n"
        "def run() -> None:\n"
        "    quokka_marker = UserAccount()\n"
    ),
    "app/debug.log": "class Ignored: pass\n",
    "web/.gitignore": "*.gen.ts\n!keep.gen.ts\n",
    "web/util.ts": (
        "export interface Shape {\n"
        "  area(): number;\n"
        "}\n"
        "\n"
        "export class Circle implements Shape {\n"
        "  constructor(private r: number) {}\n"
        "  area(): number {\n"
        "    return 3.14 * this.r * this.r;\n"
        "  }\n"
        "}\n"
        "\n"
        "export const makeCircle = (r: number): Circle => new Circle(r);\n"
        "export type Radius = number;\n"
    ),
    "web/main.ts": "import { Circle } from './util';\nconst fs = require('fs');\n",
    "web/drop.gen.ts": "export class Generated {}\n",
    "web/keep.gen.ts": "export class KeptGenerated {}\n",
    "gen/out.py": "class GenOut: pass\n",
    "gen/keep.py": "class GenKeep: pass\n",
    "secret/key.py": "class Secret: pass\n",
    "node_modules/lib/index.js": "function leftPad() {}\n",
    "go/shapes/shapes.go": (
        "package shapes\n"
        "\n"
        "type Point struct {\n"
        "\tX, Y int\n"
        "}\n"
        "\n"
        "func (p *Point) Norm() int {\n"
        "\treturn p.X\n"
        "}\n"
        "\n"
        "func NewPoint() *Point { return &Point{} }\n"
    ),
    "go/cmd/main.go": (
        'package main\n\nimport (\n\t"fmt"\n\t"example.com/demo/go/shapes"\n)\n\n'
        "func main() { fmt.Println(shapes.NewPoint()) }\n"
    ),
    "rs/src/lib.rs": (
        "mod geo;\n"
        "use crate::geo::Area;\n"
        "\n"
        "pub const LIMIT: u32 = 3;\n"
        "\n"
        "pub struct Square {\n"
        "    side: f64,\n"
        "}\n"
        "\n"
        "impl Area for Square {\n"
        "    fn area(&self) -> f64 {\n"
        "        self.side * self.side\n"
        "    }\n"
        "}\n"
    ),
    "rs/src/geo.rs": "pub trait Area {\n    fn area(&self) -> f64;\n}\n",
}


def write_tree(root: Path) -> None:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "app" / "blob.dat").write_bytes(b"\x00\x01binary class Nope")


@pytest.fixture
def index(tmp_path: Path) -> Iterator[CodeIndex]:
    root = tmp_path / "repo"
    write_tree(root)
    idx = CodeIndex(root, tmp_path / "index" / "code.db")
    idx.build()
    yield idx
    idx.close()


def paths(index: CodeIndex) -> set[str]:
    return {f.path for f in index.structure(".")}


def test_ignored_files_are_absent(index: CodeIndex) -> None:
    indexed = paths(index)
    for gone in (
        "app/debug.log",
        "web/drop.gen.ts",
        "gen/out.py",
        "secret/key.py",
        "node_modules/lib/index.js",
        "app/blob.dat",
    ):
        assert gone not in indexed
    assert {"gen/keep.py", "web/keep.gen.ts", "app/models.py", "rs/src/lib.rs"} <= indexed
    assert index.locate("Secret") == [] and index.locate("Generated") == []


def test_symbols_with_lines(index: CodeIndex) -> None:
    outline = {s.name: s for s in index.structure("app/models.py")[0].symbols}
    assert (outline["MAX_USERS"].kind, outline["MAX_USERS"].line) == ("constant", 3)
    assert (outline["UserAccount"].kind, outline["UserAccount"].line) == ("class", 6)
    assert (outline["UserAccount"].end_line) == 11
    assert (outline["save"].kind, outline["save"].parent, outline["save"].line) == (
        "method",
        "UserAccount",
        7,
    )
    assert (outline["load"].line, outline["make_user"].kind) == (10, "function")
    ts = {(s.name, s.kind, s.line, s.parent) for s in index.structure("web/util.ts")[0].symbols}
    assert {
        ("Shape", "interface", 1, None),
        ("Circle", "class", 5, None),
        ("area", "method", 7, "Circle"),
        ("makeCircle", "function", 12, None),
        ("Radius", "type", 13, None),
    } <= ts
    go = {(s.name, s.kind, s.line, s.parent) for s in index.structure("go/shapes")[0].symbols}
    assert {
        ("Point", "struct", 3, None),
        ("Norm", "method", 7, "Point"),
        ("NewPoint", "function", 11, None),
    } <= go
    rs = {(s.name, s.kind, s.line, s.parent) for s in index.structure("rs/src/lib.rs")[0].symbols}
    assert {
        ("LIMIT", "constant", 4, None),
        ("Square", "struct", 6, None),
        ("Square", "impl", 10, None),
        ("area", "method", 11, "Square"),
    } <= rs


def test_locate_ranks_and_normalises(index: CodeIndex) -> None:
    hits = index.locate("UserAccount")
    assert [(h.path, h.line, h.kind) for h in hits] == [("app/models.py", 6, "class")]
    assert index.locate("useraccount")[0].name == "UserAccount"
    assert index.locate("user_account")[0].name == "UserAccount"
    assert index.locate("MakeUser")[0].name == "make_user"
    square = index.locate("Square")
    assert [h.kind for h in square] == ["struct", "impl"]


def test_imports_and_imported_by(index: CodeIndex) -> None:
    deps = index.dependencies("app/service.py", "imports")
    got = {(e.module, e.target) for e in deps.imports}
    assert ("os", None) in got
    assert ("app.models", "app/models.py") in got
    assert (".", "app/models.py") in got
    back = index.dependencies("app/models.py", "imported_by").imported_by
    assert {(e.path, e.line) for e in back} == {("app/service.py", 2), ("app/service.py", 3)}
    ts = index.dependencies("web/util.ts", "both")
    assert [(e.path, e.module) for e in ts.imported_by] == [("web/main.ts", "./util")]
    main = {(e.module, e.target) for e in index.dependencies("web/main.ts").imports}
    assert main == {("./util", "web/util.ts"), ("fs", None)}
    go = index.dependencies("go/cmd/main.go").imports
    assert {(e.module, e.target) for e in go} == {
        ("fmt", None),
        ("example.com/demo/go/shapes", "go/shapes/"),
    }
    assert [e.path for e in index.dependencies("go/shapes/shapes.go", "imported_by").imported_by]
    geo = index.dependencies("rs/src/geo.rs", "imported_by").imported_by
    assert {(e.path, e.module) for e in geo} == {
        ("rs/src/lib.rs", "mod geo"),
        ("rs/src/lib.rs", "crate::geo::Area"),
    }


def test_full_text_search(index: CodeIndex) -> None:
    hits = index.search("quokka_marker")
    assert [(h.path, h.line) for h in hits] == [("app/service.py", 6)]
    assert "[quokka_marker]" in hits[0].snippet
    assert index.search("GenOut") == []
    assert index.search("") == []
    assert {h.path for h in index.search("area number")} == {"web/util.ts"}


def test_incremental_update_moves_and_removes(index: CodeIndex) -> None:
    models = index.root / "app" / "models.py"
    models.write_text("\n\n\n" + models.read_text())
    assert index.update_files([models]) == 1
    assert index.update_files(["app/models.py"]) == 0  # same hash: nothing to do
    assert index.locate("UserAccount")[0].line == 9
    (index.root / "rs" / "src" / "geo.rs").unlink()
    index.update_files(["rs/src/geo.rs"])
    assert [h for h in index.locate("Area") if h.path == "rs/src/geo.rs"] == []
    (index.root / "web" / "util.ts").unlink()
    index.remove_files(["web/util.ts"])
    assert index.search("makeCircle") == []
    with sqlite3.connect(index.db_path) as conn:
        for table in ("symbols", "imports", "import_targets", "files"):
            stale = conn.execute(
                f"SELECT count(*) FROM {table} WHERE path IN ('rs/src/geo.rs', 'web/util.ts')"
            ).fetchone()[0]
            assert stale == 0, table
        orphans = conn.execute(
            "SELECT count(*) FROM contents WHERE rowid NOT IN (SELECT id FROM files)"
        ).fetchone()[0]
        assert orphans == 0
        assert (
            conn.execute("SELECT count(*) FROM symbols WHERE name = 'UserAccount'").fetchone()[0]
            == 1
        )
    # a full build after deletions on disk finds nothing to change and nothing stale
    stats = index.build()
    assert (stats.indexed, stats.removed) == (0, 0)


def test_paths_outside_root_are_refused(index: CodeIndex, tmp_path: Path) -> None:
    with pytest.raises(PathOutsideRootError):
        index.update_files([tmp_path / "elsewhere.py"])
    with pytest.raises(PathOutsideRootError):
        index.dependencies("../escape.py")
    with pytest.raises(PathOutsideRootError):
        index.structure("/etc")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("class Leak: pass\n")
    (index.root / "link").symlink_to(outside)
    with pytest.raises(PathOutsideRootError):
        index.update_files(["link/leak.py"])
    index.build()  # the walk never follows the link either
    assert index.locate("Leak") == []


def test_queries_during_a_build(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for k in range(400):
        pkg = root / f"pkg{k % 20}"
        pkg.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def func_{k}_{j}(x):\n    return x + {j}\n\n" for j in range(40))
        (pkg / f"mod{k}.py").write_text(f"class Thing{k}:\n    pass\n\n" + body)
    index = CodeIndex(root, tmp_path / "big.db")
    seen: list[int] = []
    progress: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    builder = threading.Thread(target=lambda: index.build(lambda d, t: progress.append((d, t))))
    builder.start()
    while builder.is_alive():
        try:
            seen.append(len(index.locate("Thing0")) + len(index.search("pass", limit=500)))
        except BaseException as exc:  # any error here is the failure under test
            errors.append(exc)
            break
    builder.join()
    assert not errors
    assert progress[-1] == (400, 400)
    assert len(index.search("pass", limit=500)) == 400
    assert index.locate("func_399_39")[0].line == 3 + 39 * 3 + 1
    assert len(seen) > 1
    index.close()


def test_drift_is_what_an_edited_gitignore_hides_and_shows(index: CodeIndex) -> None:
    assert index.drift() == (set(), set())
    (index.root / ".gitignore").write_text("app/\n")
    hidden, shown = index.drift()
    assert hidden == {"app/__init__.py", "app/models.py", "app/service.py"}
    assert shown == {"gen/out.py", "secret/key.py"}  # app/debug.log: under app/ now
    assert index.drift("secret") == (set(), {"secret/key.py"})
    assert index.drift("web") == (set(), set())  # web/.gitignore did not change
    index.remove_files(hidden)
    index.update_files(shown)
    assert index.drift() == (set(), set())
    assert index.locate("Secret")[0].path == "secret/key.py" and index.locate("UserAccount") == []


def test_the_index_of_a_workspace_is_private_to_the_user(tmp_path: Path) -> None:
    # It holds the workspace's text, a .env included.
    import stat

    root = tmp_path / "ws"
    root.mkdir()
    (root / ".env").write_text("API_TOKEN=tok-not-for-others\n")
    (root / "app.py").write_text("def main():\n    pass\n")
    (tmp_path / "index").mkdir(mode=0o755)
    db = tmp_path / "index" / "code.db"
    index = CodeIndex(root, db)
    try:
        index.build()
        files = [db, *db.parent.glob("code.db-*")]
        assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o600}, files
        assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    finally:
        index.close()
