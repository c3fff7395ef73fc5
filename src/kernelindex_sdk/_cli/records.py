"""``kernelindex validate``, ``digest`` and ``schema``: checking records and the schemas."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from .. import declared_digests, documents, validation
from .._base.display import display_path, json_safe, printable, printable_pointer
from .._base.files import refuse_overwriting_inputs
from .._base.schemas import (
    SCHEMA_FILES,
    export_schemas,
    load_schemas,
    schema_text,
    self_contained_schema,
)
from ..conditions import record_degraded_reason
from ..errors import InputError
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Streams,
    add_verify_digests,
    notice,
    silence_stdout,
    stdout_fd,
)

__all__ = ["register"]


def _property(text: str) -> str:
    # GitHub workflow commands: properties escape % CR LF : and , (in that spirit,
    # % first so the other escapes are not escaped again).
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github(problem: documents.FileProblem) -> str:
    p = problem.problem
    where = f"file={_property(printable(display_path(problem.source)))}"
    if p.line is not None:
        where += f",line={p.line},col={p.column}"
    elif problem.line is not None:
        where += f",line={problem.line}"
    pointer = printable_pointer(p.pointer) or "(document)"
    message = f"{pointer}: {printable(p.message, documents.MAX_MESSAGE)} [{p.code}]"
    return f"::error {where}::{_data(message)}"


def _json_text(value: object) -> str:
    # ensure_ascii=False keeps names readable; a lone surrogate left in any string (a
    # declared digest, say) becomes the visible text of its escape, never the escape
    # itself, which strict JSON parsers refuse.
    return json_safe(json.dumps(value, indent=2, ensure_ascii=False)) + "\n"


class _Tally:
    """What validate saw: documents, valid ones, and whether any input was unreadable."""

    def __init__(self, io: Streams) -> None:
        self.documents = self.valid = self.degraded = 0
        self.unreadable = False
        self._io = io

    def unreadable_input(self, err: InputError) -> None:
        self.unreadable = True
        print(f"kernelindex: {err}", file=self._io.stderr)

    @property
    def status(self) -> int:
        if self.unreadable:
            return EXIT_USAGE
        return EXIT_INVALID if self.valid < self.documents else EXIT_OK


def _cmd_validate(args: argparse.Namespace, io: Streams) -> int:
    tally = _Tally(io)
    render: Callable[[documents.FileProblem], str] = _github if args.format == "github" else str
    found: list[dict[str, object]] = []
    say = notice(io)
    refuse_overwriting_inputs(stdout_fd(io), args.paths)
    results = documents.check_documents(
        args.paths,
        verify_digests=args.verify_digests,
        stdin=io.stdin,
        on_error=tally.unreadable_input,
        on_notice=say,
    )
    try:
        for result in results:
            tally.documents += 1
            tally.valid += result.valid
            # A valid run whose GPU state makes it unfit to compare: a notice, not a problem.
            reason = record_degraded_reason(result.value) if result.value is not None else None
            if reason is not None:
                tally.degraded += 1
                say(f"{printable(display_path(result.document.label))}: degraded: {reason}")
            if args.format == "json":
                found.extend(p.as_dict() for p in result.problems)
            else:
                for problem in result.problems:
                    print(render(problem), file=io.stdout)
        if args.format == "json":
            io.stdout.write(_json_text(found))
        io.stdout.flush()
    except BrokenPipeError:
        # The reader went away (| head -1): the verdict so far stands. In text form a
        # problem was being printed, so it is not a pass; the JSON form is printed for
        # valid input too ("[]").
        silence_stdout(io)
        return tally.status if args.format == "json" else max(tally.status, EXIT_INVALID)
    if not args.quiet:
        invalid = tally.documents - tally.valid
        degraded = f", {tally.degraded} degraded" if tally.degraded else ""
        print(
            f"kernelindex: {tally.documents} document(s): {tally.valid} valid,"
            f" {invalid} invalid{degraded}",
            file=io.stderr,
        )
    return tally.status


def _comparison(c: validation.DigestComparison) -> tuple[str, str | None]:
    if c.error is not None:
        return f"cannot compute: {c.error}", None
    if c.computed is None:
        return "not recomputable: the input lacks the object", None
    if c.declared is None:
        return "its own digest (nothing declares it)", c.computed
    return ("ok" if c.matches else "MISMATCH"), c.computed


def _digest_entry(result: declared_digests.DocumentDigests) -> dict[str, object]:
    document = result.document
    entry: dict[str, object] = {"source": display_path(document.source), "line": document.line}
    if result.problems:
        entry["problems"] = [p.as_dict() for p in result.problems]
        return entry
    entry["digests"] = [
        {
            "field": c.field,
            "declared": c.declared,
            "computed": c.computed,
            "matches": c.matches,
            "verdict": _comparison(c)[0],
        }
        for c in result.comparisons
    ]
    return entry


def _print_digests(result: declared_digests.DocumentDigests, io: Streams) -> None:
    print(printable(display_path(result.document.label)), file=io.stdout)
    for c in result.comparisons:
        verdict, computed = _comparison(c)
        print(f"  {c.field}", file=io.stdout)
        print(f"    declared  {printable(c.declared) if c.declared else '-'}", file=io.stdout)
        print(f"    computed  {computed or '-'}  {printable(verdict)}", file=io.stdout)


def _cmd_digest(args: argparse.Namespace, io: Streams) -> int:
    status = EXIT_OK
    entries: list[dict[str, object]] = []

    def unreadable(err: InputError) -> None:
        nonlocal status
        status = EXIT_USAGE
        print(f"kernelindex: {err}", file=io.stderr)

    refuse_overwriting_inputs(stdout_fd(io), args.paths)
    results = declared_digests.digest_documents(
        args.paths, stdin=io.stdin, on_error=unreadable, on_notice=notice(io)
    )
    try:
        for result in results:
            if not result.ok:
                status = max(status, EXIT_INVALID)
            if args.format == "json":
                entries.append(_digest_entry(result))
            elif result.problems:
                for problem in result.problems:
                    print(problem, file=io.stderr)
            else:
                _print_digests(result, io)
        if args.format == "json":
            io.stdout.write(_json_text(entries))
        io.stdout.flush()
    except BrokenPipeError:
        # The reader went away: the verdict so far stands.
        silence_stdout(io)
    return status


def _cmd_schema(args: argparse.Namespace, io: Streams) -> int:
    if args.out is not None:
        written = export_schemas(args.out, args.kind)
        print(f"wrote {len(written)} schema file(s) to {args.out}", file=io.stdout)
    elif args.kind:
        io.stdout.write(schema_text(self_contained_schema(args.kind)))
    else:
        schemas = load_schemas()
        rows = [(kind, name, schemas[name]["$id"]) for kind, name in SCHEMA_FILES.items()]
        kind_width = max(len(kind) for kind, _, _ in rows)
        name_width = max(len(name) for _, name, _ in rows)
        for kind, name, uri in rows:
            print(f"{kind:{kind_width}}  {name:{name_width}}  {uri}", file=io.stdout)
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    validate = sub.add_parser(
        "validate",
        help="check records against the schemas and the semantic checks",
        description=(
            "Validate JSON and JSON Lines records. Folders are searched recursively for"
            " *.json and *.jsonl (any letter case); '-' reads standard input; a file reached"
            " twice is read once. Prints one line per problem, and a summary on standard"
            " error. Exits 0 when all are valid, 1 when any is invalid, 2 on usage errors or"
            " when an input could not be read (the others are still checked). Inside a"
            " folder, a *.json or *.jsonl name that is not a regular file (a dangling"
            " symlink, a FIFO, a device) is such an input. A problem of a JSON Lines record"
            " names its line even when it has no column (nesting too deep, say)."
            f" One document (a .json file, a JSON Lines line, or standard input) may hold"
            f" at most {documents.MAX_DOCUMENT_BYTES // 2**20} MiB."
        ),
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")
    add_verify_digests(validate)
    validate.add_argument(
        "--format",
        choices=("text", "json", "github"),
        default="text",
        help="text (path:line:col: /pointer: message [code]), json, or GitHub annotations",
    )
    validate.add_argument(
        "-q", "--quiet", action="store_true", help="no summary line on standard error"
    )
    validate.set_defaults(run=_cmd_validate)

    digest = sub.add_parser(
        "digest",
        help="show the digests a run declares beside those computed from its content",
        description=(
            "Show, for each record of the given files and folders (read as validate reads"
            " them; '-' is standard input), the digests it declares beside those computed"
            " from the objects it carries. A run or a bundle shows its four digests: 'ok'"
            " when declared and computed agree, MISMATCH when they differ, 'not"
            " recomputable' when the record lacks the object (a published run may carry"
            " only the digest). A standalone protocol or environment shows its own digest,"
            " the value a run's protocolDigest or environmentDigest declares for it. An"
            " invalid record gets validate's lines (path:line:col: /pointer: message"
            " [code]) on standard error. Exits 0 when every record is valid and no digest"
            " differs, 1 otherwise, 2 on usage errors or when an input could not be read"
            " (the others are still shown)."
        ),
    )
    digest.add_argument("paths", nargs="+", metavar="PATH")
    digest.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text, or json: a list of {source, line, digests: [{field, declared, computed,"
        " matches, verdict}]}, or {source, line, problems: [...]} (as validate --format"
        " json prints them) for an invalid record",
    )
    digest.set_defaults(run=_cmd_digest)

    schema = sub.add_parser(
        "schema",
        help="print or write the packaged JSON Schemas",
        description=(
            "Without arguments, list the schemas: kind, file and $id. With KIND, print its"
            " schema file, which embeds every schema it refers to (one file that works"
            " offline). With --out DIR, write KIND's file and those it refers to (every"
            " file without KIND) into DIR, as packaged: each of them is self-contained."
        ),
    )
    schema.add_argument("kind", nargs="?", choices=sorted(SCHEMA_FILES), metavar="KIND")
    schema.add_argument(
        "--out", metavar="DIR", help="write the schema files into DIR, each atomically"
    )
    schema.set_defaults(run=_cmd_schema)
