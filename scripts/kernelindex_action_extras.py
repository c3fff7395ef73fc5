"""The action's install step, once pip installed kernelindex-sdk: its ``[postgres]`` extra
when the store is PostgreSQL, whichever requirement installed the SDK.

A pinned ``sdk:`` input (``kernelindex-sdk==0.7.0``, a git URL, a wheel) names no extra,
and appending ``[postgres]`` to an arbitrary requirement is no safe edit. The installed
distribution's own metadata lists what its extra needs (``psycopg[binary]>=3.1,<4; extra ==
"postgres"``): those requirements are installed, with the pins of the version installed.
Whether the store is PostgreSQL is the SDK's own rule (``kernelindex_sdk.store.parse_url``),
so a key=value connection string counts as it does for the CLI.

Run as ``python kernelindex_action_extras.py`` with ``INPUT_DB`` (and ``KERNELINDEX_DB``)
in the environment; exits with pip's status, 0 when nothing was needed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping

from kernelindex_sdk.errors import KernelIndexError
from kernelindex_sdk.store import parse_url

DISTRIBUTION = "kernelindex-sdk"
EXTRA = "postgres"
#: What the extra brings, and how to tell it is there.
MODULE = "psycopg"


def extra_requirements(requires: Iterable[str], extra: str = EXTRA) -> list[str]:
    """The requirements of ``extra`` in a distribution's ``Requires-Dist`` lines, without
    their markers."""
    marker = re.compile(rf"""\bextra\s*==\s*["']{re.escape(extra)}["']""")
    return [
        line.split(";", 1)[0].strip()
        for line in requires
        if ";" in line and marker.search(line.split(";", 1)[1])
    ]


def main(env: Mapping[str, str] | None = None) -> int:
    """Install the ``[postgres]`` extra when the action's store needs it; the exit status."""
    env = os.environ if env is None else env
    try:
        dialect = parse_url(env.get("INPUT_DB") or None, env).dialect
    except KernelIndexError:
        return 0  # the action's own step says what is wrong with the URL
    if dialect != "postgresql":
        return 0
    if importlib.util.find_spec(MODULE) is not None:
        print(f"kernelindex action: {MODULE} is installed (a PostgreSQL store)")
        return 0
    wanted = extra_requirements(importlib.metadata.requires(DISTRIBUTION) or [])
    if not wanted:
        print(
            f"::error::kernelindex action: the installed {DISTRIBUTION} declares no"
            f" [{EXTRA}] extra; a PostgreSQL store needs {MODULE}"
        )
        return 1
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--quiet"]
    print(f"kernelindex action: a PostgreSQL store: installing {' '.join(wanted)}", flush=True)
    # The requirements are the installed distribution's own metadata, not input.
    return subprocess.run([*command, *wanted], check=False).returncode  # noqa: S603


if __name__ == "__main__":
    sys.exit(main())
