"""The action's SQLite store kept on a branch of the repository (the ``store-branch`` input).

Why a branch: an artifact expires (90 days by default) and, of two runs that downloaded
the same store, the last upload wins silently; a cache is evicted after a week unused.
A branch lasts as long as the repository, and a save that another run overtook is
refused by git, never lost: it is pushed with ``--force-with-lease`` against the commit
the store was restored from, and the caller then restores the newer store, ingests its
records again (ingest keeps what the store holds already) and saves again.

The branch holds one commit: the store's file, gzip-compressed (:data:`STORE_FILE`,
whatever the store's local name), and a README. Each save replaces that commit, so the repository
does not grow by a copy of the store at every push (a clone of every branch fetches one
store). GitHub refuses files over 100 MB: a store whose compressed file passes
:data:`MAX_BYTES` is refused here, with the advice to move to PostgreSQL.

Run by ``kernelindex_action.py``, in the job's checkout (``actions/checkout``, whose
persisted credentials push), with git on PATH.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import sqlite3
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

#: The remote the store branch lives on: the checkout's.
REMOTE = "origin"
#: The largest compressed store saved: GitHub refuses a file over 100 MB (and warns
#: over 50 MB).
MAX_BYTES = 95 * 1000 * 1000
#: The store's file on the branch.
STORE_FILE = "kernelindex.sqlite3.gz"
#: The local ref the store branch is fetched into (outside refs/heads and refs/remotes).
FETCHED = "refs/kernelindex/store"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "github-actions[bot]",
    "GIT_AUTHOR_EMAIL": "41898283+github-actions[bot]@users.noreply.github.com",
    "GIT_COMMITTER_NAME": "github-actions[bot]",
    "GIT_COMMITTER_EMAIL": "41898283+github-actions[bot]@users.noreply.github.com",
}
README = """# The kernelindex store

This branch is written by the kernelindex GitHub Action (`store-branch` input): `{name}`
is the records store (a SQLite file, gzip-compressed) that the benchmark workflow
restores before comparing a job's runs with their history, and saves after adding them.
Each save replaces this branch's one commit. Read it with
`git show {branch}:{name} | gunzip > kernelindex.sqlite3`, then `kernelindex history`.
"""


class StoreBranchError(Exception):
    """The store branch could not be read or written (the message says why)."""


class OvertakenError(StoreBranchError):
    """Another run saved the store after this one restored it."""


def _git(
    args: Sequence[str], env: Mapping[str, str], *, data: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    try:
        # git from PATH, with this script's own arguments.
        return subprocess.run(  # noqa: S603
            ["git", *args],  # noqa: S607
            input=data,
            capture_output=True,
            env={**env, **_IDENTITY, "GIT_TERMINAL_PROMPT": "0"},
            check=False,
        )
    except OSError as err:
        raise StoreBranchError(f"the store branch needs git: {err.strerror or err}") from None


def _out(done: subprocess.CompletedProcess[bytes]) -> str:
    return done.stdout.decode("utf-8", "replace").strip()


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def _remote_head(branch: str, env: Mapping[str, str]) -> str:
    """The branch's commit on the remote; '' when the remote has no such branch."""
    if _git(["rev-parse", "--git-dir"], env).returncode != 0:
        raise StoreBranchError(
            "the store branch needs the repository checked out in the working directory"
            " (actions/checkout)"
        )
    found = _git(["ls-remote", "--exit-code", REMOTE, f"refs/heads/{branch}"], env)
    if found.returncode == 2:
        return ""
    if found.returncode != 0:
        raise StoreBranchError(f"cannot read branch {branch!r} of {REMOTE}: {_said(found)}")
    return _out(found).split()[0]


def restore(branch: str, store: Path, env: Mapping[str, str]) -> str:
    """Put the branch's store at ``store`` (an earlier file there is replaced).

    Returns:
        The branch's commit, the lease a later :func:`save` holds; '' when the branch does
        not exist yet (the first run: ``store`` is left as it is).

    Raises:
        StoreBranchError: when the branch cannot be read, or holds no store of this name.
    """
    head = _remote_head(branch, env)
    if not head:
        return ""
    fetched = _git(["fetch", "--no-tags", "--depth=1", REMOTE, f"+{head}:{FETCHED}"], env)
    if fetched.returncode != 0:
        # A server that refuses fetching a commit by name: fetch the branch.
        fetched = _git(
            ["fetch", "--no-tags", "--depth=1", REMOTE, f"+refs/heads/{branch}:{FETCHED}"], env
        )
        if fetched.returncode != 0:
            raise StoreBranchError(f"cannot fetch branch {branch!r}: {_said(fetched)}")
        head = _out(_git(["rev-parse", FETCHED], env))
    name = STORE_FILE
    shown = _git(["cat-file", "blob", f"{head}:{name}"], env)
    if shown.returncode != 0:
        raise StoreBranchError(f"branch {branch!r} holds no {name!r}: {_said(shown)}")
    try:
        data = gzip.decompress(shown.stdout)
    except (OSError, EOFError) as err:
        raise StoreBranchError(f"{branch}:{name} is not gzip data: {err}") from None
    _replace(store, data)
    return head


def _replace(store: Path, data: bytes) -> None:
    """Write ``data`` as the store's file in one rename; an old log beside it goes first."""
    store.parent.mkdir(parents=True, exist_ok=True)
    # SQLite would replay a write-ahead log left by the file being replaced into the new one.
    for companion in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{store}{companion}")
    fd, tmp = tempfile.mkstemp(prefix=f".{store.name}-", dir=store.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, store)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _snapshot(store: Path) -> bytes:
    """The store as one consistent SQLite file (its log folded in), gzip-compressed."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "store.sqlite3"
        try:
            source = sqlite3.connect(store)
        except sqlite3.Error as err:
            raise StoreBranchError(f"cannot read the store {str(store)!r}: {err}") from None
        try:
            target = sqlite3.connect(copy)
            try:
                source.backup(target)
            finally:
                target.close()
        except sqlite3.Error as err:
            raise StoreBranchError(f"cannot read the store {str(store)!r}: {err}") from None
        finally:
            source.close()
        # mtime 0: the same store gives the same bytes.
        return gzip.compress(copy.read_bytes(), compresslevel=6, mtime=0)


def _blob(data: bytes, env: Mapping[str, str]) -> str:
    done = _git(["hash-object", "-w", "--stdin"], env, data=data)
    if done.returncode != 0:
        raise StoreBranchError(f"git hash-object failed: {_said(done)}")
    return _out(done)


def save(branch: str, store: Path, lease: str, message: str, env: Mapping[str, str]) -> str:
    """Push the store as the branch's one commit, if the branch is still at ``lease``.

    Returns:
        The commit pushed.

    Raises:
        OvertakenError: when another run moved the branch since ``lease`` (restore and retry).
        StoreBranchError: when the store is too large or the push is refused otherwise
            (a read-only token: the job needs ``contents: write``).
    """
    data = _snapshot(store)
    if len(data) > MAX_BYTES:
        raise StoreBranchError(
            f"the store is {len(data) / 1e6:.0f} MB compressed; GitHub refuses files over"
            " 100 MB: keep it in PostgreSQL instead (docs/guides/github-action.md)"
        )
    name = STORE_FILE
    readme = README.format(name=name, branch=branch).encode("utf-8")
    listing = (
        f"100644 blob {_blob(readme, env)}\tREADME.md\n100644 blob {_blob(data, env)}\t{name}\n"
    )
    tree = _git(["mktree"], env, data=listing.encode("utf-8"))
    if tree.returncode != 0:
        raise StoreBranchError(f"git mktree failed: {_said(tree)}")
    commit = _git(["commit-tree", _out(tree), "-m", message], env)
    if commit.returncode != 0:
        raise StoreBranchError(f"git commit-tree failed: {_said(commit)}")
    sha = _out(commit)
    pushed = _git(
        [
            "push",
            "--quiet",
            f"--force-with-lease=refs/heads/{branch}:{lease}",
            REMOTE,
            f"{sha}:refs/heads/{branch}",
        ],
        env,
    )
    if pushed.returncode == 0:
        return sha
    if _remote_head(branch, env) != lease:
        raise OvertakenError(f"branch {branch!r} moved since the store was restored")
    raise StoreBranchError(
        f"cannot push branch {branch!r} (the job needs permissions: contents: write):"
        f" {_said(pushed)}"
    )
