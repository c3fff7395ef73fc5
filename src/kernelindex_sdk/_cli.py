"""The ``kernelindex`` command: argument parsing and printing only.

Each subcommand calls one library function; KernelIndexError is mapped to an exit
status here and nowhere else: 1 for invalid input, 2 for usage and I/O errors.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

import attrs

from . import __version__, documents, validation
from ._schemas import SCHEMA_FILES, load_schemas
from .errors import InputError, KernelIndexError

__all__ = ["main"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


@attrs.frozen
class _Streams:
    stdout: IO[str]
    stderr: IO[str]
    stdin: IO[bytes]


def _github(problem: documents.FileProblem) -> str:
    p = problem.problem
    where = f"file={problem.source}"
    if p.line is not None:
        where += f",line={p.line},col={p.column}"
    message = f"{p.pointer or '(document)'}: {p.message} [{p.code}]".replace("%", "%25")
    return f"::error {where}::{message.replace(chr(10), '%0A')}"


def _cmd_validate(args: argparse.Namespace, io: _Streams) -> int:
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


def _cmd_digest(args: argparse.Namespace, io: _Streams) -> int:
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


def _cmd_schema(args: argparse.Namespace, io: _Streams) -> int:
    schemas = load_schemas()
    if args.out is not None:
        out = Path(args.out)
        names = [SCHEMA_FILES[args.kind]] if args.kind else sorted(schemas)
        # A kind's schema refers to common.json: write it alongside.
        if args.kind:
            names.append("common.json")
        try:
            out.mkdir(parents=True, exist_ok=True)
            for name in names:
                (out / name).write_text(json.dumps(schemas[name], indent=2) + "\n", "utf-8")
        except OSError as err:
            raise InputError(source=str(out), reason=err.strerror or str(err)) from err
        print(f"wrote {len(names)} schema file(s) to {out}", file=io.stdout)
    elif args.kind:
        json.dump(schemas[SCHEMA_FILES[args.kind]], io.stdout, indent=2)
        io.stdout.write("\n")
    else:
        for kind, name in SCHEMA_FILES.items():
            print(f"{kind:22} {name}  {schemas[name]['$id']}", file=io.stdout)
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelindex",
        description="Produce and check GPU kernel benchmark records (kernelindex.dev/v1alpha1).",
    )
    parser.add_argument("--version", action="version", version=f"kernelindex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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

    schema = sub.add_parser("schema", help="print or write the packaged JSON Schemas")
    schema.add_argument("kind", nargs="?", choices=sorted(SCHEMA_FILES), metavar="KIND")
    schema.add_argument("--out", metavar="DIR", help="write the schema files into DIR")
    schema.set_defaults(run=_cmd_schema)

    importer = sub.add_parser("import", help="convert foreign benchmark results into records")
    formats = importer.add_subparsers(dest="format", metavar="FORMAT", required=True)
    liger = formats.add_parser(
        "liger",
        help="Liger-Kernel's benchmark CSVs (benchmark/data/all_benchmark_data.csv)",
        description=(
            "Convert each row into a bundle (run, protocol, environment) with all four digests,"
            " validated, appended to OUT as JSON Lines record by record. A row that cannot be"
            " converted is reported with its line and reason; the others still convert, and"
            " the exit status is then 1."
        ),
    )
    liger.add_argument("csv", nargs="+", metavar="CSV")
    _add_out(liger)
    liger.set_defaults(run=_cmd_import_liger)

    bench = sub.add_parser("bench", help="run a reference benchmark sweep, writing its records")
    suites = bench.add_subparsers(dest="suite", metavar="SUITE", required=True)
    jsd = suites.add_parser(
        "jsd",
        help="the JSD loss forward: torch, torch.compile, our Triton kernel, Liger-Kernel",
        description=(
            "Check each implementation against a float64 reference, time it, and append one"
            " record per point to OUT as it finishes. Without a GPU, runs on the CPU (Triton"
            " in its interpreter) on small default shapes with a wall-clock timer."
        ),
    )
    jsd.add_argument(
        "--impl",
        type=_names,
        default=("torch", "triton"),
        metavar="LIST",
        help="comma-separated: torch,triton,torch-compile,liger (default torch,triton)",
    )
    jsd.add_argument("--tokens", type=_ints, metavar="LIST", help="rows BT (default per device)")
    jsd.add_argument(
        "--vocab", type=_ints, metavar="LIST", help="vocabulary V (default per device)"
    )
    jsd.add_argument(
        "--dtype", type=_names, metavar="LIST", help="fp32,bf16,fp16 (default per device)"
    )
    jsd.add_argument("--pass", dest="pass_", choices=("forward",), default="forward")
    jsd.add_argument("--beta", type=float, default=0.5)
    jsd.add_argument(
        "--input-grad",
        choices=("off", "on", "both"),
        default="off",
        help="time the forward that also computes dL/dinput (default off)",
    )
    _add_out(jsd)
    jsd.add_argument("--no-progress", action="store_true", help="no progress bar")
    jsd.set_defaults(run=_cmd_bench_jsd)
    return parser


def _cmd_import_liger(args: argparse.Namespace, io: _Streams) -> int:
    import warnings

    from .documents import JSONLinesWriter
    from .importers import liger

    rejected = 0

    def report(error: KernelIndexError) -> None:
        nonlocal rejected
        rejected += 1
        print(str(error), file=io.stderr)

    imported = 0
    with (
        warnings.catch_warnings(record=True) as caught,
        JSONLinesWriter(args.out, stream=io.stdout) as out,
    ):
        warnings.simplefilter("always", liger.UnknownGpuWarning)
        for bundle in liger.read_files(args.csv, on_error=report):
            out.write(bundle)
            imported += 1
    for warning in caught:
        print(f"warning: {warning.message}", file=io.stderr)
    print(f"imported {imported} row(s); {rejected} rejected", file=io.stderr)
    return EXIT_INVALID if rejected else EXIT_OK


def _add_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--out",
        default="-",
        metavar="OUT.jsonl",
        help="JSON Lines file to append to (default: standard output)",
    )


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in _names(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None


def _cmd_bench_jsd(args: argparse.Namespace, io: _Streams) -> int:
    try:
        from .reference_kernels.device import select_device
    except ImportError:
        print(
            "kernelindex bench needs the [bench] extra: pip install 'kernelindex-sdk[bench]'",
            file=io.stderr,
        )
        return EXIT_USAGE
    device = select_device()
    if device.type == "cpu":
        print(
            "kernelindex: no GPU found; running on the CPU (Triton in its interpreter) on small"
            " shapes with a wall-clock timer",
            file=io.stderr,
        )
    from .documents import JSONLinesWriter
    from .reference_kernels.jsd import sweep

    unknown = [name for name in args.impl if name not in sweep.PROVIDERS]
    if unknown:
        print(
            f"kernelindex: unknown --impl {', '.join(unknown)}; expected some of"
            f" {', '.join(sweep.PROVIDERS)}",
            file=io.stderr,
        )
        return EXIT_USAGE
    if "liger" in args.impl and not sweep.liger_available():
        print(
            "kernelindex: --impl liger needs liger-kernel (pip install liger-kernel)",
            file=io.stderr,
        )
        return EXIT_USAGE
    defaults = sweep.GPU_DEFAULTS if device.type == "cuda" else sweep.CPU_DEFAULTS
    dtypes = args.dtype or defaults.dtypes
    bad = [d for d in dtypes if d not in sweep.DTYPES]
    if bad:
        print(
            f"kernelindex: unknown --dtype {', '.join(bad)}; expected some of"
            f" {', '.join(sweep.DTYPES)}",
            file=io.stderr,
        )
        return EXIT_USAGE
    grads = {"off": (False,), "on": (True,), "both": (False, True)}[args.input_grad]
    points = sweep.cases(
        args.tokens or defaults.tokens,
        args.vocab or defaults.vocab,
        dtypes,
        beta=args.beta,
        input_grad=grads,
    )
    from tqdm import tqdm

    failed = 0
    total = len(points) * len(args.impl)
    with (
        JSONLinesWriter(args.out, stream=io.stdout) as out,
        tqdm(total=total, file=io.stderr, disable=args.no_progress, unit="run") as progress,
    ):
        for record in sweep.run_sweep(args.impl, points, device):
            out.write(record)
            spec = record.run.spec
            failed += spec.status == "failed"
            median = spec.timing.latency_ns.median if spec.timing else None
            shown = f"{median / 1e6:.4f} ms" if median is not None else spec.status
            progress.set_postfix_str(f"{record.run.metadata.name[:60]} {shown}")
            progress.update()
    if failed:
        print(f"kernelindex: {failed} of {total} runs failed; see their records", file=io.stderr)
    return EXIT_INVALID if failed else EXIT_OK


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[bytes] | None = None,
) -> int:
    """Run ``kernelindex`` with ``argv``; return the exit status."""
    io = _Streams(
        stdout=stdout or sys.stdout, stderr=stderr or sys.stderr, stdin=stdin or sys.stdin.buffer
    )
    parser = _parser()
    try:
        # argparse writes --help, --version and usage errors to sys.stdout/stderr itself.
        with contextlib.redirect_stdout(io.stdout), contextlib.redirect_stderr(io.stderr):
            args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return int(args.run(args, io))
    except InputError as err:
        print(f"kernelindex: {err}", file=io.stderr)
        return EXIT_USAGE
    except KernelIndexError as err:
        print(str(err), file=io.stderr)
        return EXIT_INVALID
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        # Records already written stay: the writer flushed each one.
        print("kernelindex: interrupted", file=io.stderr)
        return 130
