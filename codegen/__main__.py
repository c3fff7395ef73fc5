"""`python -m codegen [--check]`: regenerate the models, or fail when they drifted."""

from __future__ import annotations

import argparse
import difflib
import sys

from . import ROOT, generate_files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codegen",
        description=(
            "Generate src/kernelindex_sdk/models from schemas/, and embed in each schema"
            " file a copy of every file it refers to."
        ),
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the committed models or schema files differ from a"
        " fresh generation",
    )
    args = parser.parse_args(argv)
    drifted = []
    for path, text in generate_files().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            continue
        rel = path.relative_to(ROOT)
        if args.check:
            drifted.append(rel)
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    text.splitlines(keepends=True),
                    f"{rel} (committed)",
                    f"{rel} (generated)",
                )
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
    if drifted:
        names = ", ".join(str(p) for p in drifted)
        print(f"generated files out of date: {names}; run `python -m codegen`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
