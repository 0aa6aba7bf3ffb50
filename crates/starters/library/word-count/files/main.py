"""The command line: `python3 main.py FILE...` (or text on standard input)."""

import argparse
import sys

from wordcount import DESCRIPTION, TOP, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("files", nargs="*", help="text files to read (none: read standard input)")
    parser.add_argument("--top", type=int, default=TOP, help=f"how many common words to list (default {TOP})")
    args = parser.parse_args(argv)
    if not args.files:
        print(report(sys.stdin.read(), args.top))
        return 0
    status = 0
    for name in args.files:
        try:
            with open(name, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print(f"{name}: {e.strerror}", file=sys.stderr)
            status = 1
            continue
        if len(args.files) > 1:
            print(f"== {name}")
        print(report(text, args.top))
    return status


if __name__ == "__main__":
    sys.exit(main())
