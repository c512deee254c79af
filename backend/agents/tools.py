"""The tool executor interface of the agent loop, and workspace tools.

The skill gateway will plug in here as another ``ToolExecutor``; until then
agents get two real, read-only tools confined to the session's workspace.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.errors import SylkError
from backend.llm.types import ToolCall, ToolSpec
from backend.workspace.files import Workspace


class ToolOutcome(BaseModel):
    content: str
    is_error: bool = False


class ToolExecutor(Protocol):
    def specs(self) -> list[ToolSpec]: ...

    async def execute(self, call: ToolCall) -> ToolOutcome: ...


class _ReadFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="file path relative to the workspace root")
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)


class _ListDir(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(default=".", description="directory relative to the workspace root")


def _field_errors(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


class WorkspaceTools:
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="read_file",
                description="Read a text file in the workspace, optionally a line range.",
                input_schema=_ReadFile.model_json_schema(),
            ),
            ToolSpec(
                name="list_dir",
                description="List a directory in the workspace (directories end with /).",
                input_schema=_ListDir.model_json_schema(),
            ),
        ]

    async def execute(self, call: ToolCall) -> ToolOutcome:
        try:
            return ToolOutcome(content=self._run(call.name, call.arguments))
        except ValidationError as exc:
            return ToolOutcome(
                content=f"VALIDATION_ERROR: invalid arguments for {call.name}: "
                f"{_field_errors(exc)}",
                is_error=True,
            )
        except SylkError as exc:
            return ToolOutcome(content=f"{type(exc).__name__}: {exc}", is_error=True)
        except OSError as exc:
            return ToolOutcome(content=f"OSError: {exc.strerror}", is_error=True)

    def _run(self, name: str, arguments: dict[str, Any]) -> str:
        if name == "read_file":
            args = _ReadFile.model_validate(arguments)
            return self.workspace.read_text(
                args.path, start_line=args.start_line, end_line=args.end_line
            )
        if name == "list_dir":
            listed = _ListDir.model_validate(arguments)
            return "\n".join(self.workspace.list_dir(listed.path)) or "(empty)"
        known = ", ".join(s.name for s in self.specs())
        raise SylkError(f"NOT_FOUND: no tool named {name!r}", help_hint=f"tools: {known}")
