"""A throwaway PostgreSQL server for the tests: initdb into a temporary folder, started on a
Unix socket only (no TCP port), stopped and removed at the end.

As root (CI runs as root) the server runs as the ``postgres`` user through ``runuser``,
since PostgreSQL refuses to run as root. The binaries are Debian's (postgresql-15 or
another version under /usr/lib/postgresql), else ``pg_config --bindir``, else PATH.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

PORT = 5432


def find_bindir() -> Path | None:
    """The folder holding initdb and pg_ctl, or None."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    pg_config = shutil.which("pg_config")
    if pg_config:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        candidates.append(done.stdout.strip())
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).parent))
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


class Server:
    """One running server; :meth:`url` of a database in it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="kernelindex-pg-"))
        self.data = self.root / "data"
        self.socket = self.root
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = (
            f"-k {self.socket} -p {PORT} -c listen_addresses='' -c fsync=off -c max_connections=60"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-w",
            "-o",
            options,
            "start",
        )
        self._count = 0

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [*self.prefix, str(self.bindir / program), *args], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stdout}{done.stderr}")

    def url(self, schema: str | None = None) -> str:
        """The URL of the server's database; with ``schema``, one whose search path is it."""
        url = f"postgresql://postgres@/postgres?host={self.socket}&port={PORT}"
        return url if schema is None else f"{url}&options=-csearch_path%3D{schema}"

    def new_database(self) -> str:
        """The URL of a fresh, empty store place: a new schema (much quicker to make than
        a database, and as separate for the store's tables)."""
        import psycopg

        self._count += 1
        name = f"test_{self._count}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE SCHEMA {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
