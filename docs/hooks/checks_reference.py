"""Render the semantic checks (what JSON Schema cannot express) as a reference page.

The list is read from the table validation runs (``kernelindex_sdk.validation._semantic.CHECKS``),
one line per check from its docstring, so a check added there shows up here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["render_page"]


def _summary(check: Callable[..., Any]) -> str:
    doc = (check.__doc__ or "").strip()
    if not doc:
        raise ValueError(f"semantic check {check.__name__!r} has no docstring to document it")
    return " ".join(doc.split("\n\n", 1)[0].split())


def render_page(checks: Sequence[Callable[..., Any]], digest_check: Callable[..., Any]) -> str:
    """Return the Markdown page listing every semantic check.

    Args:
        checks: The checks run on every schema-valid document, in order.
        digest_check: The check run when digests are verified.

    Returns:
        The page: a table of the checks in the order validation runs them.

    Raises:
        ValueError: A check has no docstring.
    """
    rows = [f"| `{check.__name__}` | {_summary(check)} | always |" for check in checks]
    rows.append(
        f"| `{digest_check.__name__}` | {_summary(digest_check)} | with `--verify-digests`"
        " (`verify_digests=True`) |"
    )
    return "\n".join(
        [
            "# Checks beyond the schemas",
            "",
            "<!-- generated from kernelindex_sdk.validation._semantic.CHECKS"
            " by docs/hooks/checks_reference.py -->",
            "",
            "A record is valid when it matches its [schema](schemas/bundle.md) and passes these",
            "checks, which JSON Schema cannot express. They run, in this order, on every document",
            "that is schema-valid, and report every problem they find.",
            "",
            "| Check | What it requires | When |",
            "| --- | --- | --- |",
            *rows,
            "",
            "Reading the JSON text comes first: duplicate keys, `NaN` and `Infinity` are",
            "rejected there, with the line and column, and record names must be unique within",
            "one input (a file, a folder, or standard input).",
            "",
        ]
    )
