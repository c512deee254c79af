""".editorconfig: the files that apply to a target, and the formatters they configure.

``.editorconfig`` names no tool: it sets indentation, line endings and line
length for editors and for formatters that read it. It is reported on its
own (:func:`editorconfig`) and, where it sets such properties, it is the
config of a formatter that reads it (:func:`apply_editorconfig`).
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.knowledge.tool_discovery.files import ConfinedReader, join
from backend.knowledge.tool_discovery.models import ConfidenceLevel, DiscoveredTool, ToolCategory

EDITORCONFIG = ".editorconfig"
# The properties a formatter takes from .editorconfig (Prettier maps these to useTabs,
# tabWidth, endOfLine and printWidth); charset or trailing whitespace alone configure
# editors, not a formatter's output.
EDITORCONFIG_FORMATTING = frozenset(
    {"indent_style", "indent_size", "tab_width", "end_of_line", "max_line_length"}
)
# Formatters that read .editorconfig by default, so the file configures them. Whether
# Biome does depends on its version and its own useEditorconfig setting, so biome.json
# stays its evidence; black, ruff, gofmt and the rest of the catalogue ignore it.
EDITORCONFIG_READERS = frozenset({"prettier"})


@dataclass(frozen=True)
class EditorConfig:
    """The .editorconfig files that apply to a target, nearest first."""

    paths: tuple[str, ...]  # workspace-relative; stops at one declaring root = true
    formatting: tuple[str, ...]  # the formatting properties they set, sorted

    @property
    def path(self) -> str:
        return self.paths[0]


def _editorconfig_keys(text: str) -> tuple[bool, set[str]]:
    """(declares root = true, property names set in its sections) of one file.

    The format is INI-like but has a preamble without a section header, which
    configparser refuses, so lines are read directly.
    """
    is_root, in_section, keys = False, False, set()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            in_section = True
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip().lower()
        if not in_section and key == "root":
            is_root = value == "true"
        elif in_section and value != "unset":
            keys.add(key)
    return is_root, keys


def editorconfig(reader: ConfinedReader, dirs: list[str]) -> EditorConfig | None:
    """The .editorconfig files between the target's directory and the root, as an
    editor applies them: nearest first, none above one that declares ``root = true``."""
    paths: list[str] = []
    formatting: set[str] = set()
    for directory in reversed(dirs):
        rel = join(directory, EDITORCONFIG)
        text = reader.text(rel)
        if text is None:
            continue
        is_root, keys = _editorconfig_keys(text)
        paths.append(rel)
        formatting |= keys & EDITORCONFIG_FORMATTING
        if is_root:
            break
    if not paths:
        return None
    return EditorConfig(tuple(paths), tuple(sorted(formatting)))


def apply_editorconfig(tools: list[DiscoveredTool], found: EditorConfig) -> list[DiscoveredTool]:
    """A formatter that reads .editorconfig gets it as evidence and config path; one
    that was only inferred (a dependency, a script) is then configured in the project,
    so counts as high. Other tools are left alone: the file says nothing about them."""
    out: list[DiscoveredTool] = []
    for tool in tools:
        if tool.category is not ToolCategory.FORMATTER or tool.name not in EDITORCONFIG_READERS:
            out.append(tool)
            continue
        update: dict[str, object] = {
            "evidence": list(dict.fromkeys([*tool.evidence, *found.paths]))
        }
        if found.formatting:
            update["config_path"] = tool.config_path or found.path
            if tool.confidence is not ConfidenceLevel.HIGH:
                update["confidence"] = ConfidenceLevel.HIGH
                update["rationale"] = (
                    f"{tool.rationale}; configured by {found.path} ({', '.join(found.formatting)})"
                )
        out.append(tool.model_copy(update=update))
    return out
