"""What discovery knows about each tool: how to run it, install it and ask its version.

Detection finds *that* a project uses a tool; this catalog turns the name into
commands. Run commands here are the tool's own; the project's scripts and
Makefile targets take precedence when they invoke the tool (see
:mod:`~backend.knowledge.tool_discovery.rules`). ``invokes`` are the regexes that recognise the
tool inside a script, Makefile recipe or CI step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from backend.knowledge.tool_discovery.models import ToolCategory

L, F, T, X, S = (
    ToolCategory.LINTER,
    ToolCategory.FORMATTER,
    ToolCategory.TYPE_CHECKER,
    ToolCategory.TEST_FRAMEWORK,
    ToolCategory.LSP,
)
ECOSYSTEM_LANGUAGES = {
    "node": ("typescript", "javascript"),
    "python": ("python",),
    "go": ("go",),
    "rust": ("rust",),
    "ruby": ("ruby",),
    "php": ("php",),
    "clang": ("cpp", "c"),
    "shell": ("bash",),
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    ecosystem: str
    runs: dict[ToolCategory, str]
    exe: str = ""  # the executable looked up on PATH / in project bin dirs
    package: str = ""  # the npm / PyPI / gem / composer package, when it is one
    version_cmd: tuple[str, ...] = ()  # argv printing the version; [exe, --version] if empty
    invokes: dict[ToolCategory, str] = field(default_factory=dict)
    builtin: bool = False  # ships with the language toolchain

    @property
    def executable(self) -> str:
        return self.exe or self.name

    @property
    def version_argv(self) -> tuple[str, ...]:
        return self.version_cmd or (self.executable, "--version")

    def languages(self, project: list[str]) -> str:
        """The language this tool serves in a project speaking ``project``."""
        options = ECOSYSTEM_LANGUAGES.get(self.ecosystem, (self.ecosystem,))
        return next((lang for lang in options if lang in project), options[-1])


def _spec(name: str, eco: str, runs: dict[ToolCategory, str], **kw: object) -> ToolSpec:
    if "invokes" not in kw:
        kw["invokes"] = {cat: rf"(?<![\w-]){re.escape(name)}(?![\w-])" for cat in runs}
    return ToolSpec(name, eco, runs, **kw)  # type: ignore[arg-type]


_GO_VERSION = ("go", "version")
_CARGO_VERSION = ("cargo", "--version")

CATALOG: dict[str, ToolSpec] = {
    s.name: s
    for s in (
        _spec("eslint", "node", {L: "eslint ."}, package="eslint"),
        _spec("biome", "node", {L: "biome lint .", F: "biome format ."},
              package="@biomejs/biome",
              invokes={L: r"\bbiome\s+(lint|check|ci)\b", F: r"\bbiome\s+(format|check|ci)\b"}),
        _spec("oxlint", "node", {L: "oxlint ."}, package="oxlint"),
        _spec("prettier", "node", {F: "prettier --check ."}, package="prettier"),
        _spec("tsc", "node", {T: "tsc --noEmit"}, package="typescript",
              invokes={T: r"(?<![\w-])(tsc|vue-tsc)(?![\w-])"}),
        _spec("jest", "node", {X: "jest"}, package="jest"),
        _spec("vitest", "node", {X: "vitest run"}, package="vitest"),
        _spec("mocha", "node", {X: "mocha"}, package="mocha"),
        _spec("playwright", "node", {X: "playwright test"}, package="@playwright/test",
              invokes={X: r"\bplaywright\s+test\b"}),
        _spec("typescript-language-server", "node", {S: "typescript-language-server --stdio"},
              package="typescript-language-server"),
        _spec("ruff", "python", {L: "ruff check .", F: "ruff format ."}, package="ruff",
              invokes={L: r"\bruff\s+check\b", F: r"\bruff\s+format\b"}),
        _spec("black", "python", {F: "black ."}, package="black"),
        _spec("isort", "python", {F: "isort ."}, package="isort"),
        _spec("flake8", "python", {L: "flake8"}, package="flake8"),
        _spec("pylint", "python", {L: "pylint ."}, package="pylint"),
        _spec("mypy", "python", {T: "mypy ."}, package="mypy"),
        _spec("pyright", "python", {T: "pyright", S: "pyright-langserver --stdio"},
              package="pyright", invokes={T: r"(?<![\w-])pyright(?![\w-])"}),
        _spec("basedpyright", "python", {T: "basedpyright"}, package="basedpyright"),
        _spec("pytest", "python", {X: "pytest"}, package="pytest",
              invokes={X: r"(?<![\w-])(py\.test|pytest)(?![\w-])"}),
        _spec("pylsp", "python", {S: "pylsp"}, package="python-lsp-server"),
        _spec("golangci-lint", "go", {L: "golangci-lint run ./..."}),
        _spec("gofmt", "go", {F: "gofmt -l ."}, version_cmd=_GO_VERSION, builtin=True,
              invokes={F: r"\b(gofmt|go\s+fmt)\b"}),
        _spec("go vet", "go", {T: "go vet ./..."}, exe="go", version_cmd=_GO_VERSION,
              builtin=True, invokes={T: r"\bgo\s+vet\b"}),
        _spec("go test", "go", {X: "go test ./..."}, exe="go", version_cmd=_GO_VERSION,
              builtin=True, invokes={X: r"\bgo\s+test\b"}),
        _spec("gopls", "go", {S: "gopls"}, version_cmd=("gopls", "version")),
        _spec("clippy", "rust", {L: "cargo clippy --all-targets"}, exe="cargo-clippy",
              version_cmd=("cargo", "clippy", "--version"), invokes={L: r"\bcargo\s+clippy\b"}),
        _spec("rustfmt", "rust", {F: "cargo fmt --check"},
              invokes={F: r"\b(cargo\s+fmt|rustfmt)\b"}),
        _spec("cargo check", "rust", {T: "cargo check --all-targets"}, exe="cargo",
              version_cmd=_CARGO_VERSION, builtin=True, invokes={T: r"\bcargo\s+check\b"}),
        _spec("cargo test", "rust", {X: "cargo test"}, exe="cargo", version_cmd=_CARGO_VERSION,
              builtin=True, invokes={X: r"\bcargo\s+(test|nextest)\b"}),
        _spec("rust-analyzer", "rust", {S: "rust-analyzer"}),
        _spec("rubocop", "ruby", {L: "rubocop", F: "rubocop -a"}, package="rubocop",
              invokes={L: r"\brubocop\b", F: r"\brubocop\s+-[aA]\b"}),
        _spec("rspec", "ruby", {X: "rspec"}, package="rspec"),
        _spec("phpstan", "php", {L: "vendor/bin/phpstan analyse"}, package="phpstan/phpstan"),
        _spec("php-cs-fixer", "php", {F: "vendor/bin/php-cs-fixer fix --dry-run"},
              package="friendsofphp/php-cs-fixer"),
        _spec("phpunit", "php", {X: "vendor/bin/phpunit"}, package="phpunit/phpunit"),
        _spec("clang-format", "clang", {F: "clang-format --dry-run -Werror"}),
        _spec("clang-tidy", "clang", {L: "clang-tidy"}),
        _spec("shellcheck", "shell", {L: "shellcheck"}),
    )
}  # fmt: skip

# A tool's own config files, and the sections it reads in shared ones.
CONFIG_FILES: list[tuple[str, str, tuple[ToolCategory, ...]]] = [
    (".eslintrc*", "eslint", (L,)), ("eslint.config.*", "eslint", (L,)),
    ("biome.json", "biome", (L, F)), ("biome.jsonc", "biome", (L, F)),
    (".oxlintrc.json", "oxlint", (L,)), (".prettierrc*", "prettier", (F,)),
    ("prettier.config.*", "prettier", (F,)), ("tsconfig.json", "tsc", (T,)),
    ("jest.config.*", "jest", (X,)), ("vitest.config.*", "vitest", (X,)),
    ("vitest.workspace.*", "vitest", (X,)), (".mocharc*", "mocha", (X,)),
    ("playwright.config.*", "playwright", (X,)), (".golangci.*", "golangci-lint", (L,)),
    ("ruff.toml", "ruff", (L,)), (".ruff.toml", "ruff", (L,)), (".flake8", "flake8", (L,)),
    (".pylintrc", "pylint", (L,)), ("pylintrc", "pylint", (L,)), ("mypy.ini", "mypy", (T,)),
    (".mypy.ini", "mypy", (T,)), ("pytest.ini", "pytest", (X,)), ("conftest.py", "pytest", (X,)),
    ("pyrightconfig.json", "pyright", (T,)), (".isort.cfg", "isort", (F,)),
    ("rustfmt.toml", "rustfmt", (F,)), (".rustfmt.toml", "rustfmt", (F,)),
    ("clippy.toml", "clippy", (L,)), (".clippy.toml", "clippy", (L,)),
    (".rubocop.yml", "rubocop", (L, F)), (".rspec", "rspec", (X,)),
    ("phpstan.neon", "phpstan", (L,)), ("phpunit.xml*", "phpunit", (X,)),
    (".clang-format", "clang-format", (F,)), (".clang-tidy", "clang-tidy", (L,)),
    (".shellcheckrc", "shellcheck", (L,)),
]  # fmt: skip
PYPROJECT_SECTIONS: dict[str, list[tuple[str, ToolCategory]]] = {
    "ruff": [("ruff", L)], "black": [("black", F)], "isort": [("isort", F)],
    "mypy": [("mypy", T)], "pyright": [("pyright", T)], "basedpyright": [("basedpyright", T)],
    "pylint": [("pylint", L)], "flake8": [("flake8", L)], "pytest": [("pytest", X)],
}  # fmt: skip
INI_SECTIONS: dict[str, tuple[str, ToolCategory]] = {
    "flake8": ("flake8", L), "mypy": ("mypy", T), "tool:pytest": ("pytest", X),
    "pytest": ("pytest", X), "isort": ("isort", F), "pylint": ("pylint", L),
    "pylint.main": ("pylint", L), "pylint.messages control": ("pylint", L),
}  # fmt: skip

# Dependency names that mean a tool (beyond a package named exactly like the tool).
PACKAGE_TOOLS: dict[str, list[tuple[str, ToolCategory]]] = {
    "@biomejs/biome": [("biome", L), ("biome", F)],
    "typescript": [("tsc", T)],
    "@playwright/test": [("playwright", X)],
    "ruff": [("ruff", L), ("ruff", F)],
    "python-lsp-server": [("pylsp", S)],
    "phpstan/phpstan": [("phpstan", L)],
    "phpunit/phpunit": [("phpunit", X)],
    "friendsofphp/php-cs-fixer": [("php-cs-fixer", F)],
}
for _spec_ in CATALOG.values():
    if _spec_.package and _spec_.package not in PACKAGE_TOOLS:
        PACKAGE_TOOLS[_spec_.package] = [(_spec_.name, c) for c in _spec_.runs]

# pre-commit hook ids (the same ids across the official and mirror repositories).
PRE_COMMIT_HOOKS: dict[str, tuple[str, ToolCategory]] = {
    "ruff": ("ruff", L), "ruff-check": ("ruff", L), "ruff-format": ("ruff", F),
    "black": ("black", F), "isort": ("isort", F), "flake8": ("flake8", L),
    "pylint": ("pylint", L), "mypy": ("mypy", T), "pyright": ("pyright", T),
    "prettier": ("prettier", F), "eslint": ("eslint", L), "biome-check": ("biome", L),
    "biome-lint": ("biome", L), "biome-format": ("biome", F),
    "golangci-lint": ("golangci-lint", L), "golangci-lint-full": ("golangci-lint", L),
    "go-fmt": ("gofmt", F), "go-vet": ("go vet", T), "fmt": ("rustfmt", F),
    "clippy": ("clippy", L), "shellcheck": ("shellcheck", L), "rubocop": ("rubocop", L),
    "clang-format": ("clang-format", F),
}  # fmt: skip

INVOCATIONS: list[tuple[re.Pattern[str], str, ToolCategory]] = [
    (re.compile(pattern), spec.name, category)
    for spec in CATALOG.values()
    for category, pattern in spec.invokes.items()
]

# Script / target names that say which category a command serves, best first.
CATEGORY_WORDS: dict[ToolCategory, tuple[str, ...]] = {
    L: ("lint", "lint:check", "check", "eslint", "ruff", "clippy"),
    F: ("format", "fmt", "format:check", "prettier", "style"),
    T: ("typecheck", "type-check", "types", "tsc", "mypy", "check-types", "check"),
    X: ("test", "tests", "test:unit", "unit", "check"),
    S: (),
}


def invoked_tools(command: str) -> list[tuple[str, ToolCategory]]:
    """Every (tool, category) a shell command line runs."""
    return [(tool, cat) for pattern, tool, cat in INVOCATIONS if pattern.search(command)]
