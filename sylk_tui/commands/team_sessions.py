"""``sylk sessions list --team``: every session of a shared archive and who owns it.

Only what a teammate may know of another's session: its name, state and owner;
never its workspace, transcript or message count (those stay the owner's).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.engine import Engine


def print_team(engine: Engine, as_json: bool) -> int:
    team = engine.team
    rows = [r for r in team.team_rows() if not r.closed]
    if as_json:
        shown = [
            {"id": r.id, "name": r.name, "state": r.state, "owner": str(r.owner),
             "mine": r.owner == team.reader}
            for r in rows
        ]  # fmt: skip
        print(json.dumps(shown, indent=2))
        return 0
    if not rows:
        print("no sessions")
        return 0
    width = min(24, max(len(r.name) for r in rows))
    print(f"   {'id':<8}  {'state':<9}  {'name':<{width}}  owner")
    for r in rows:
        mark = "*" if r.owner == team.reader else " "
        print(f"{mark}  {r.id[:8]}  {r.state:<9}  {r.name:<{width}}  {r.owner}")
    return 0
