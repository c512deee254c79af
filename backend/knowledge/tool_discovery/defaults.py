"""The Academic's language defaults: which tool to reach for when a project configures none.

Each (language, category) names a recommended tool with the reason for it, how
to install and run it, and the credible alternatives with their trade-offs.
``satisfactory`` is False where practitioners genuinely disagree (linting
TypeScript: ESLint or Biome or oxlint; Python type checking: mypy or pyright):
there the protocol asks the user instead of deciding for them. A category
missing for a language means nothing is customary for it (no type checker for
shell scripts), not an oversight.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.knowledge.tool_discovery.models import ToolCategory, UnknownLanguageError

L, F, T, X, S = (
    ToolCategory.LINTER,
    ToolCategory.FORMATTER,
    ToolCategory.TYPE_CHECKER,
    ToolCategory.TEST_FRAMEWORK,
    ToolCategory.LSP,
)


@dataclass(frozen=True)
class ToolChoice:
    name: str
    run: str
    install: str = ""  # empty: ships with the language's toolchain
    rationale: str = ""
    pros: tuple[str, ...] = ()
    cons: tuple[str, ...] = ()
    executable: str = ""  # what to look for on PATH; the name's first word if empty

    @property
    def exe(self) -> str:
        return self.executable or self.name.split()[0]


@dataclass(frozen=True)
class CategoryDefault:
    recommended: ToolChoice
    satisfactory: bool = True
    alternatives: tuple[ToolChoice, ...] = ()
    note: str = ""  # why the choice is open, when it is

    @property
    def options(self) -> tuple[ToolChoice, ...]:
        return (self.recommended, *self.alternatives)


def _c(name: str, run: str, install: str = "", why: str = "", **kw: object) -> ToolChoice:
    return ToolChoice(name, run, install, why, **kw)  # type: ignore[arg-type]


_PIP = "pip install {}"
_NPM = "npm install -D {}"

_ESLINT = _c(
    "eslint", "npx eslint .", _NPM.format("eslint"),
    "The most widely used JavaScript linter; typescript-eslint adds type-aware rules.",
    pros=("largest rule and plugin ecosystem", "type-aware rules via typescript-eslint"),
    cons=("slowest of the three", "flat-config migration churn"),
)  # fmt: skip
_BIOME = _c(
    "biome", "npx @biomejs/biome lint .", _NPM.format("@biomejs/biome"),
    "One fast binary that lints and formats with almost no configuration.",
    pros=("very fast", "linter and formatter in one tool"),
    cons=("fewer rules and plugins than ESLint", "no type-aware rules"),
    executable="biome",
)  # fmt: skip
_OXLINT = _c(
    "oxlint", "npx oxlint .", _NPM.format("oxlint"),
    "A very fast Rust linter that ports the most used ESLint rules.",
    pros=("fastest linter", "runs alongside ESLint"),
    cons=("younger project", "plugin support is limited"),
)  # fmt: skip
_TSC_ONLY = _c(
    "tsc", "npx tsc --noEmit", _NPM.format("typescript"),
    "No separate linter: rely on the compiler's strict checks.",
    pros=("nothing extra to install or configure",),
    cons=("catches type errors only, not style or bug patterns",),
)  # fmt: skip


def _node(language: str) -> dict[ToolCategory, CategoryDefault]:
    linters = (_BIOME, _OXLINT, _TSC_ONLY) if language == "typescript" else (_BIOME, _OXLINT)
    return {
        L: CategoryDefault(
            _ESLINT, satisfactory=False, alternatives=linters,
            note="ESLint, Biome and oxlint are all current community choices",
        ),
        F: CategoryDefault(_c(
            "prettier", "npx prettier --check .", _NPM.format("prettier"),
            "The de facto formatter for JavaScript, TypeScript, CSS and Markdown.",
        ), alternatives=(_BIOME,)),
        T: CategoryDefault(_c(
            "tsc", "npx tsc --noEmit", _NPM.format("typescript"),
            "The TypeScript compiler is the reference type checker (also checks JSDoc in JS).",
        )),
        X: CategoryDefault(_c(
            "vitest", "npx vitest run", _NPM.format("vitest"),
            "Fast, Jest-compatible API, TypeScript and ES modules without extra setup.",
            pros=("fast", "native ESM and TypeScript"), cons=("younger than Jest",),
        ), alternatives=(_c(
            "jest", "npx jest", _NPM.format("jest"), "The long-standing standard test runner.",
            pros=("mature", "huge ecosystem"), cons=("ESM and TypeScript need extra setup",),
        ),)),
        S: CategoryDefault(_c(
            "typescript-language-server", "typescript-language-server --stdio",
            _NPM.format("typescript-language-server typescript"),
            "The standard LSP wrapper around tsserver, used by most editors outside VS Code.",
        )),
    }  # fmt: skip


_PYTHON: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c(
        "ruff", "ruff check .", _PIP.format("ruff"),
        "Replaces flake8, isort and pyupgrade with one very fast tool; the current default.",
    ), alternatives=(_c("flake8", "flake8", _PIP.format("flake8"), "The classic linter."),
                     _c("pylint", "pylint .", _PIP.format("pylint"), "Deep but slow checks."))),
    F: CategoryDefault(_c(
        "ruff", "ruff format .", _PIP.format("ruff"),
        "Black-compatible output at a fraction of the time.",
    ), alternatives=(_c("black", "black .", _PIP.format("black"), "The original."),)),
    T: CategoryDefault(_c(
        "mypy", "mypy .", _PIP.format("mypy"),
        "The reference type checker with the most plugins (pydantic, django, sqlalchemy).",
        pros=("reference implementation", "plugin ecosystem"), cons=("slower on big code",),
    ), satisfactory=False, alternatives=(_c(
        "pyright", "pyright", _PIP.format("pyright"),
        "Fast, strict inference; the engine behind Pylance.",
        pros=("fast", "better inference of untyped code"), cons=("no mypy plugins",),
    ),), note="mypy and pyright are both standard and disagree on some rules"),
    X: CategoryDefault(_c(
        "pytest", "pytest", _PIP.format("pytest"),
        "The community standard: plain asserts, fixtures, a large plugin ecosystem.",
    )),
    S: CategoryDefault(_c(
        "pyright", "pyright-langserver --stdio", _PIP.format("pyright"),
        "Accurate completions and type information; ruff's server only covers lint fixes.",
        executable="pyright-langserver",
    )),
}  # fmt: skip

_GO: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c(
        "golangci-lint", "golangci-lint run ./...",
        "go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@latest",
        "Runs go vet, staticcheck and dozens of linters in one pass.",
    )),
    F: CategoryDefault(_c("gofmt", "gofmt -l .", "", "Go has exactly one format.")),
    T: CategoryDefault(_c("go vet", "go vet ./...", "", "The compiler type-checks; vet "
                          "adds the standard correctness checks.", executable="go")),
    X: CategoryDefault(_c("go test", "go test ./...", "", "Built into the toolchain.",
                          executable="go")),
    S: CategoryDefault(_c("gopls", "gopls", "go install golang.org/x/tools/gopls@latest",
                          "The Go team's official language server.")),
}  # fmt: skip

_RUST: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c("clippy", "cargo clippy --all-targets", "rustup component add clippy",
                          "The official Rust linter.", executable="cargo-clippy")),
    F: CategoryDefault(_c("rustfmt", "cargo fmt --check", "rustup component add rustfmt",
                          "The official formatter.")),
    T: CategoryDefault(_c("cargo check", "cargo check --all-targets", "",
                          "The compiler's checks without code generation.", executable="cargo")),
    X: CategoryDefault(_c("cargo test", "cargo test", "", "Built into cargo.",
                          executable="cargo")),
    S: CategoryDefault(_c("rust-analyzer", "rust-analyzer", "rustup component add rust-analyzer",
                          "The official Rust language server.")),
}  # fmt: skip

_RUBY: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c("rubocop", "bundle exec rubocop", "bundle add rubocop",
                          "The standard Ruby linter and style checker.")),
    F: CategoryDefault(_c("rubocop", "bundle exec rubocop -a", "bundle add rubocop",
                          "Autocorrects layout with the same rules it lints.")),
    T: CategoryDefault(_c("sorbet", "bundle exec srb tc", "bundle add sorbet",
                          "Gradual typing with inline signatures.", executable="srb"),
                       satisfactory=False,
                       alternatives=(_c("steep", "bundle exec steep check", "bundle add steep",
                                        "Checks RBS signature files."),),
                       note="Ruby typing is split between Sorbet and RBS/Steep"),
    X: CategoryDefault(_c("rspec", "bundle exec rspec", "bundle add rspec",
                          "The most common Ruby test framework."),
                       alternatives=(_c("minitest", "bundle exec rake test", "",
                                        "Ships with Ruby; Rails' default.", executable="rake"),)),
    S: CategoryDefault(_c("ruby-lsp", "ruby-lsp", "gem install ruby-lsp",
                          "Shopify's language server, the current default in editors.")),
}  # fmt: skip

_CLANG: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c("clang-tidy", "clang-tidy", "", "LLVM's linter with modernize "
                          "and bug-prone checks.")),
    F: CategoryDefault(_c("clang-format", "clang-format --dry-run -Werror", "",
                          "The de facto C and C++ formatter.")),
    T: CategoryDefault(_c("clang", "clang -fsyntax-only", "", "Compiler diagnostics.")),
    X: CategoryDefault(_c("ctest", "ctest --test-dir build", "", "CMake's test driver."),
                       satisfactory=False,
                       alternatives=(_c("googletest", "ctest --test-dir build", "",
                                        "Google's C++ framework.", executable="ctest"),
                                     _c("catch2", "ctest --test-dir build", "",
                                        "Header-friendly C++ framework.", executable="ctest")),
                       note="C and C++ projects use many test frameworks"),
    S: CategoryDefault(_c("clangd", "clangd", "", "LLVM's language server.")),
}  # fmt: skip

_BASH: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c("shellcheck", "shellcheck **/*.sh", "", "Finds the classic shell "
                          "scripting bugs (quoting, globbing).")),
    F: CategoryDefault(_c("shfmt", "shfmt -d .", "go install mvdan.cc/sh/v3/cmd/shfmt@latest",
                          "The standard shell formatter.")),
    X: CategoryDefault(_c("bats", "bats test", "", "TAP-compliant shell tests.")),
    S: CategoryDefault(_c("bash-language-server", "bash-language-server start",
                          "npm install -g bash-language-server", "Uses shellcheck inside.")),
}  # fmt: skip

_JAVA: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c("checkstyle", "mvn checkstyle:check", "", "Style checks through the "
                          "build tool.", executable="mvn"), satisfactory=False,
                       alternatives=(_c("pmd", "mvn pmd:check", "", "Bug patterns.",
                                        executable="mvn"),
                                     _c("error-prone", "mvn compile", "", "Compiler plugin.",
                                        executable="mvn")),
                       note="Java teams combine Checkstyle, PMD, SpotBugs and Error Prone"),
    F: CategoryDefault(_c("google-java-format", "google-java-format --dry-run", "",
                          "One fixed style, no configuration.")),
    T: CategoryDefault(_c("javac", "mvn compile", "", "The compiler.", executable="mvn")),
    X: CategoryDefault(_c("junit", "mvn test", "", "The standard (JUnit 5).", executable="mvn")),
    S: CategoryDefault(_c("jdtls", "jdtls", "", "Eclipse's Java language server.")),
}  # fmt: skip

_PHP: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c("phpstan", "vendor/bin/phpstan analyse",
                          "composer require --dev phpstan/phpstan", "Static analysis levels.")),
    F: CategoryDefault(_c("php-cs-fixer", "vendor/bin/php-cs-fixer fix --dry-run",
                          "composer require --dev friendsofphp/php-cs-fixer", "PSR-12 fixes.")),
    T: CategoryDefault(_c("phpstan", "vendor/bin/phpstan analyse", "composer require --dev "
                          "phpstan/phpstan", "Type inference over docblocks and signatures.")),
    X: CategoryDefault(_c("phpunit", "vendor/bin/phpunit", "composer require --dev "
                          "phpunit/phpunit", "The standard PHP test framework.")),
    S: CategoryDefault(_c("intelephense", "intelephense --stdio", "npm install -g intelephense",
                          "Fast, widely used PHP language server.")),
}  # fmt: skip

_CSHARP: dict[ToolCategory, CategoryDefault] = {
    L: CategoryDefault(_c("dotnet format", "dotnet format --verify-no-changes", "",
                          "Roslyn analyzers through the SDK.", executable="dotnet")),
    F: CategoryDefault(_c("dotnet format", "dotnet format whitespace --verify-no-changes", "",
                          "Ships with the SDK.", executable="dotnet")),
    T: CategoryDefault(_c("dotnet build", "dotnet build", "", "The compiler.",
                          executable="dotnet")),
    X: CategoryDefault(_c("dotnet test", "dotnet test", "", "Runs xUnit, NUnit or MSTest.",
                          executable="dotnet")),
    S: CategoryDefault(_c("omnisharp", "OmniSharp -lsp", "", "The long-standing C# server.",
                          executable="OmniSharp")),
}  # fmt: skip

LANGUAGE_DEFAULTS: dict[str, dict[ToolCategory, CategoryDefault]] = {
    "python": _PYTHON,
    "javascript": _node("javascript"),
    "typescript": _node("typescript"),
    "go": _GO,
    "rust": _RUST,
    "ruby": _RUBY,
    "java": _JAVA,
    "c": _CLANG,
    "cpp": _CLANG,
    "bash": _BASH,
    "php": _PHP,
    "csharp": _CSHARP,
}
ALIASES = {"py": "python", "js": "javascript", "ts": "typescript", "golang": "go",
           "rs": "rust", "rb": "ruby", "c++": "cpp", "sh": "bash", "shell": "bash",
           "c#": "csharp", "cs": "csharp"}  # fmt: skip


def known_languages() -> list[str]:
    return sorted(LANGUAGE_DEFAULTS)


def normalise_language(language: str) -> str:
    key = language.strip().lower()
    return ALIASES.get(key, key)


def language_defaults(language: str) -> dict[ToolCategory, CategoryDefault]:
    """The defaults for ``language`` (aliases accepted), or :class:`UnknownLanguageError`."""
    key = normalise_language(language)
    if key not in LANGUAGE_DEFAULTS:
        raise UnknownLanguageError(language, known_languages())
    return LANGUAGE_DEFAULTS[key]
