"""The greet command line: ``greet [NAME]`` says hello."""

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="greet", description="Say hello.")
    parser.add_argument("name", nargs="?", default="world", help="who to greet")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    print(f"hello, {args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
