"""``kernelindex validate``, ``digest`` and ``schema``: checking records and the schemas."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from .. import documents, validation
from .._schemas import (
    SCHEMA_FILES,
    export_schemas,
    load_schemas,
    schema_text,
    self_contained_schema,
)
from ..errors import KernelIndexError
from ._common import EXIT_INVALID, EXIT_OK, Streams

__all__ = ["register"]


def _github(problem: documents.FileProblem) -> str:
    p = problem.problem
    where = f"file={problem.source}"
    if p.line is not None:
        where += f",line={p.line},col={p.column}"
    message = f"{p.pointer or '(document)'}: {p.message} [{p.code}]".replace("%", "%25")
    return f"::error {where}::{message.replace(chr(10), '%0A')}"


def _cmd_validate(args: argparse.Namespace, io: Streams) -> int:
    problems = documents.validate_paths(
        args.paths, verify_digests=args.verify_digests, stdin=io.stdin
    )
    count = 0
    if args.format == "json":
        found = [p.as_dict() for p in problems]
        count = len(found)
        json.dump(found, io.stdout, indent=2, ensure_ascii=False)
        io.stdout.write("\n")
    else:
        render: Callable[[documents.FileProblem], str] = _github if args.format == "github" else str
        for problem in problems:
            count += 1
            print(render(problem), file=io.stdout)
    return EXIT_INVALID if count else EXIT_OK


def _cmd_digest(args: argparse.Namespace, io: Streams) -> int:
    status = EXIT_OK
    for document in documents.iter_documents([args.path], stdin=io.stdin):
        where = f"{document.source}:{document.line}" if document.line != 1 else document.source
        try:
            comparisons = validation.compare_digests(document.text)
        except KernelIndexError as err:
            print(f"{where}: {err}", file=io.stderr)
            status = EXIT_INVALID
            continue
        print(where, file=io.stdout)
        for c in comparisons:
            if c.error is not None:
                verdict, computed = f"cannot compute: {c.error}", "-"
            elif c.computed is None:
                verdict, computed = "not recomputable: the input lacks the object", "-"
            else:
                verdict, computed = ("ok" if c.matches else "MISMATCH"), c.computed
                if not c.matches:
                    status = EXIT_INVALID
            print(f"  {c.field}", file=io.stdout)
            print(f"    declared  {c.declared}", file=io.stdout)
            print(f"    computed  {computed}  {verdict}", file=io.stdout)
    return status


def _cmd_schema(args: argparse.Namespace, io: Streams) -> int:
    if args.out is not None:
        written = export_schemas(args.out, args.kind)
        print(f"wrote {len(written)} schema file(s) to {args.out}", file=io.stdout)
    elif args.kind:
        io.stdout.write(schema_text(self_contained_schema(args.kind)))
    else:
        schemas = load_schemas()
        for kind, name in SCHEMA_FILES.items():
            print(f"{kind:22} {name}  {schemas[name]['$id']}", file=io.stdout)
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    validate = sub.add_parser(
        "validate",
        help="check records against the schemas and the semantic checks",
        description=(
            "Validate JSON and JSON Lines records. Folders are searched recursively for"
            " *.json and *.jsonl; '-' reads standard input. Prints one line per problem;"
            " exits 0 when all are valid, 1 when any is invalid, 2 on usage or I/O errors."
        ),
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")
    validate.add_argument(
        "--verify-digests",
        action="store_true",
        help="recompute every digest whose object a record carries",
    )
    validate.add_argument(
        "--format",
        choices=("text", "json", "github"),
        default="text",
        help="text (path:line:col: /pointer: message [code]), json, or GitHub annotations",
    )
    validate.set_defaults(run=_cmd_validate)

    digest = sub.add_parser(
        "digest",
        help="show the digests a run declares beside those computed from its content",
    )
    digest.add_argument("path", metavar="PATH")
    digest.set_defaults(run=_cmd_digest)

    schema = sub.add_parser(
        "schema",
        help="print or write the packaged JSON Schemas",
        description=(
            "Without arguments, list the schemas. With KIND, print its schema with every"
            " schema it refers to embedded (one file that works offline). With --out DIR,"
            " write the files KIND needs (all without KIND) into DIR; DIR/bundle.json is"
            " always self-contained."
        ),
    )
    schema.add_argument("kind", nargs="?", choices=sorted(SCHEMA_FILES), metavar="KIND")
    schema.add_argument(
        "--out", metavar="DIR", help="write the schema files into DIR, each atomically"
    )
    schema.set_defaults(run=_cmd_schema)
