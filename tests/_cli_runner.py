"""The CLI run in-process with captured streams: what the ``run_cli`` fixture gives."""

from __future__ import annotations

import io
from collections.abc import Callable

from kernelindex_sdk._cli import main

#: ``run_cli(*argv)`` -> (exit status, stdout, stderr).
RunCli = Callable[..., tuple[int, str, str]]


def run_in_process(*argv: str) -> tuple[int, str, str]:
    """``kernelindex ARGV...`` through ``main()``; its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()
