"""What binding a row costs Python's sqlite3, by the kind of its values, side by side.

    PYTHONPATH=src taskset -c 1 python benchmarks/sqlite_params.py \
        [--out benchmarks/results/sqlite_params.json]

0.6.1's inserts (``store/_sqlite_params.py``, removed since: docs/store.md, "Speed", has
what they bought a whole ingest, under 3%) wrote a run's None values as NULL literals of
the statement and put 64 rows in one statement; the store now binds rows plainly. This
times each choice against the plain one on the same rows, inserted into an in-memory
table with ``executemany`` (CPU time a row, the best of ``--repeat``):

- five integers (the baseline), then two of them None bound as parameters, then the same
  two written NULL in the statement;
- an integer beside a 3.5 KB text given as bytes (cast to TEXT, as the store does), as a
  bytearray, and as str; then bytes and bytearrays made of them (timed), 64 rows a
  statement;
- a run-like row of 20 values (three None) one row a statement, and 64 rows a statement.
"""

# Statements built from our own constants, no input: S608 does not apply.
# ruff: noqa: S608

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results

ROWS = 20_000
TEXT = b'{"run":' + b"x" * 3500 + b"}"


def _per_row(sql: str, rows: Sequence[Sequence[Any]], width: int, repeat: int) -> float:
    """CPU us a row of ``rows`` (each ``width`` values) inserted by ``sql``."""
    return _per_many(sql, lambda: rows, width, repeat, ROWS)


def _per_many(
    sql: str, make: Callable[[], Sequence[Sequence[Any]]], width: int, repeat: int, count: int
) -> float:
    """CPU us a row of ``count`` rows whose parameters ``make`` builds (timed with it:
    a conversion of the values counts) and ``sql`` inserts."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE t ({', '.join(f'c{i}' for i in range(width))})")
    best = float("inf")
    for _ in range(repeat):
        db.execute("DELETE FROM t")
        start = time.process_time()
        db.executemany(sql, make())
        best = min(best, time.process_time() - start)
    db.close()
    return round(best / count * 1e6, 3)


def _marks(width: int) -> str:
    return ", ".join("?" * width)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    r = args.repeat
    five = "INSERT INTO t VALUES (?, ?, ?, ?, ?)"
    results = {
        "five integers": _per_row(five, [(1, 2, 3, 4, 5)] * ROWS, 5, r),
        "two of them None, bound": _per_row(five, [(1, None, None, 4, 5)] * ROWS, 5, r),
        "two of them NULL in the statement": _per_row(
            "INSERT INTO t VALUES (?, NULL, NULL, ?, ?)", [(1, 4, 5)] * ROWS, 5, r
        ),
    }
    two = "INSERT INTO t VALUES (?, CAST(? AS TEXT))"
    results["text as bytes"] = _per_row(two, [(1, TEXT)] * ROWS, 2, r)
    results["text as bytearray"] = _per_row(two, [(1, bytearray(TEXT))] * ROWS, 2, r)
    results["text as str"] = _per_row(
        "INSERT INTO t VALUES (?, ?)", [(1, TEXT.decode())] * ROWS, 2, r
    )
    per = 64
    texts = [(i, TEXT) for i in range(ROWS)]
    whole = ROWS - ROWS % per
    many_texts = ", ".join(["(?, CAST(? AS TEXT))"] * per)

    def grouped(rows: list[tuple[Any, ...]]) -> list[list[Any]]:
        flat = [v for row in rows[:whole] for v in row]
        return [flat[at : at + 2 * per] for at in range(0, len(flat), 2 * per)]

    results[f"text as bytes, {per} a statement"] = _per_many(
        f"INSERT INTO t VALUES {many_texts}", lambda: grouped(texts), 2, r, whole
    )
    results[f"text made a bytearray, {per} a statement"] = _per_many(
        f"INSERT INTO t VALUES {many_texts}",
        lambda: grouped([(i, bytearray(text)) for i, text in texts]),
        2,
        r,
        whole,
    )
    run: tuple[Any, ...] = tuple(
        None if i in (2, 3, 8) else (f"value-{i}" if i % 2 else i) for i in range(20)
    )
    nulls = [i for i, v in enumerate(run) if v is None]
    kept = tuple(v for v in run if v is not None)
    values = ", ".join("NULL" if i in nulls else "?" for i in range(20))
    results["run row, Nones bound, one a statement"] = _per_row(
        f"INSERT INTO t VALUES ({_marks(20)})", [run] * ROWS, 20, r
    )
    results["run row, NULL literals, one a statement"] = _per_row(
        f"INSERT INTO t VALUES ({values})", [kept] * ROWS, 20, r
    )
    many = ", ".join([f"({values})"] * per)
    rows = [kept * per] * (ROWS // per)
    # The same 20,000 rows (ROWS // per statements of per rows: 19,968 of them).
    results[f"run row, NULL literals, {per} a statement"] = round(
        _per_row(f"INSERT INTO t VALUES {many}", rows, 20, r) * ROWS / (len(rows) * per), 3
    )
    write_results(
        {
            "command": " ".join(["python benchmarks/sqlite_params.py", *sys.argv[1:]]),
            "machine": platform.machine(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "load_average": round(os.getloadavg()[0], 2),
            "rows": ROWS,
            "cpu_us_per_row_best_of_repeats": results,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
