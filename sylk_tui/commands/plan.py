"""``sylk plan validate FILE``: check a plan document from the shell, no engine needed.

Every problem is printed with its path in the document (``nodes[2].depends_on[0]``);
the exit status is 0 for a valid plan and 2 (a usage error: the input is wrong)
otherwise. ``--json`` prints the report, or the problems, as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_OK, EXIT_INVALID = 0, 2


def add_parser(commands: Any) -> None:
    plan = commands.add_parser("plan", help="check a plan document")
    verbs = plan.add_subparsers(dest="plan_verb", metavar="VERB", required=True)
    check = verbs.add_parser(
        "validate",
        help="validate a plan document (JSON or YAML)",
        description="Check a plan (the Architect's DAG schema) as Sylk would before running "
        "it: schema, agents, dependencies, cycles, execution order. Exit 0 when valid, 2 "
        "when not.",
    )
    check.add_argument("file", metavar="FILE")
    check.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from backend.plans import PlanError, validate_file

    try:
        report = validate_file(args.file)
    except PlanError as exc:
        problems = (exc.details or {}).get("problems", [])
        if args.json:
            print(json.dumps({"valid": False, "problems": problems}, indent=2))
        else:
            print(f"sylk: error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.render())
    return EXIT_OK
