"""One worker process per device: a sweep's points spread over every GPU of a host.

:func:`run_on_devices` splits the points between the devices by estimated cost
(:func:`kernelindex_sdk.sharding.partition`), starts one process per device (the
``spawn`` method: a fresh interpreter, no CUDA state inherited), pins each to its device
through environment variables set before the worker callable is even unpickled, and
runs the callable there one point at a time. Records come back as JSON text through one
pipe per worker; only the parent yields them, so only it writes the output and draws
progress. A worker that dies (a crash, a signal, an exception) becomes failed records for
the points it had not finished, made by an injected factory, while the others go on; an
interrupt stops every worker and keeps every record that had already been sent.

This module imports no torch: the worker callable does, inside its process.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from multiprocessing import connection
from typing import Any, Final, Generic, TypeVar

import attrs

from .._base.numbers import parse_integer
from ..convert import dumps, load_record
from ..errors import ArgumentError, KernelIndexError, LaunchError
from ..sharding import partition

__all__ = ["Device", "Finished", "cuda_devices", "parse_devices", "run_on_devices"]

P = TypeVar("P")

#: How long a stopped worker may take to exit before it is killed.
_STOP_SECONDS: Final = 5.0


@attrs.frozen
class Device:
    """A device one worker process is pinned to.

    Attributes:
        name: How messages and progress name it, e.g. ``cuda:1``.
        target: The device string the worker callable receives, e.g. ``cuda:0`` (the
            only GPU the pinned process sees).
        environ: Variables set in the worker process before the worker callable is
            loaded, e.g. ``{"CUDA_VISIBLE_DEVICES": "1"}``.
    """

    name: str
    target: str
    environ: Mapping[str, str] = attrs.field(factory=dict, hash=False)


@attrs.frozen
class Finished(Generic[P]):
    """One record of a point, as the parent received it.

    Attributes:
        device: The name of the device whose worker ran the point.
        point: The point.
        record: The record, decoded in the parent; for ``worker_failed`` the
            failure factory's record.
        worker_failed: True when the worker never finished the point (it died or
            raised) and the record comes from the failure factory.
    """

    device: str
    point: P
    record: Any
    worker_failed: bool = False


def parse_devices(text: str, available: int) -> list[int]:
    """Parse ``--devices all|0,1,...`` against the number of visible GPUs.

    Raises:
        LaunchError: for no GPU, an index that is not visible, or a repeated index.
    """
    if available < 1:
        raise LaunchError(setting="--devices", reason=f"no GPU is visible, got {text!r}")
    if text.strip(" ") == "all":
        return list(range(available))
    try:
        # One reading of numbers everywhere: ASCII digits, no '_' or sign; ASCII spaces
        # around the commas, as every list option takes them.
        indices = [
            parse_integer(part.strip(" "), what="--devices", maximum=available - 1)
            for part in text.split(",")
        ]
    except ArgumentError:
        indices = []
    if not indices:
        raise LaunchError(
            setting="--devices",
            reason=(
                f"expected 'all' or comma-separated GPU indices below {available}, got {text!r}"
            ),
        )
    if len(set(indices)) != len(indices):
        raise LaunchError(setting="--devices", reason=f"expected each GPU once, got {text!r}")
    return indices


def cuda_devices(indices: Sequence[int], environ: Mapping[str, str] | None = None) -> list[Device]:
    """The devices for GPU ordinals as this process sees them, each pinned alone.

    An ordinal counts among the GPUs ``CUDA_VISIBLE_DEVICES`` leaves visible here, so
    the worker's ``CUDA_VISIBLE_DEVICES`` is that entry of the list (or the ordinal
    itself when the variable is unset); the worker then sees its GPU as ``cuda:0``.
    """
    env = os.environ if environ is None else environ
    visible = env.get("CUDA_VISIBLE_DEVICES")
    entries = [e.strip() for e in visible.split(",")] if visible is not None else None
    devices = []
    for i in indices:
        physical = entries[i] if entries is not None else str(i)
        devices.append(
            Device(name=f"cuda:{i}", target="cuda:0", environ={"CUDA_VISIBLE_DEVICES": physical})
        )
    return devices


def _message(*parts: Any) -> bytes:
    return json.dumps(parts, ensure_ascii=False).encode()


def _work(
    out: connection.Connection, environ: dict[str, str], worker: bytes, points: bytes, target: str
) -> None:
    """A worker process: pin, then run each point and send its records as JSON text."""
    # The parent alone handles Ctrl-C: it stops the workers and keeps what they sent.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Before unpickling: loading the worker imports torch, which must see the pinning.
    os.environ.update(environ)
    run = pickle.loads(worker)  # noqa: S301 (our own parent pickled it)
    share = pickle.loads(points)  # noqa: S301
    index = 0
    try:
        for index, point in enumerate(share):
            # One point per call: the parent then knows exactly which points finished.
            for record in run((point,), target):
                out.send_bytes(_message("record", index, dumps(record, indent=None)))
            out.send_bytes(_message("point", index))
    except Exception as err:
        # The parent may be gone already; the exit status still tells it something failed.
        with contextlib.suppress(OSError):
            out.send_bytes(_message("error", index, f"{type(err).__name__}: {err}"))
        out.close()
        os._exit(1)
    out.close()


@attrs.define
class _Worker(Generic[P]):
    device: Device
    share: Sequence[P]
    process: Any
    reader: connection.Connection
    finished: int = 0
    error: str | None = None

    def ended(self) -> str | None:
        """Why the worker stopped early, or None when it finished every point."""
        self.process.join(_STOP_SECONDS)
        if self.finished == len(self.share) and self.error is None:
            return None
        if self.error is not None:
            return f"the worker on {self.device.name} raised {self.error}"
        code = self.process.exitcode
        how = (
            f"was killed by {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exited with status {code}"
        )
        return f"the worker process on {self.device.name} {how} before finishing this point"


def _start(ctx: Any, device: Device, share: Sequence[P], worker: bytes) -> _Worker[P]:
    reader, writer = ctx.Pipe(duplex=False)
    process = ctx.Process(
        target=_work,
        args=(writer, dict(device.environ), worker, pickle.dumps(list(share)), device.target),
        name=f"kernelindex-worker-{device.name}",
        daemon=True,
    )
    process.start()
    # Only the child holds the writing end now: its exit is an end of file here.
    writer.close()
    return _Worker(device=device, share=share, process=process, reader=reader)


def _stop(workers: Iterable[_Worker[Any]]) -> None:
    for w in workers:
        if w.process.is_alive():
            w.process.terminate()
    for w in workers:
        w.process.join(_STOP_SECONDS)
        if w.process.is_alive():
            w.process.kill()
            w.process.join()


def run_on_devices(
    worker: Callable[[Sequence[P], str], Iterable[Any]],
    points: Sequence[P],
    devices: Sequence[Device],
    *,
    failed: Callable[[P, Device, str], Any],
    cost: Callable[[P], float] | None = None,
    decode: Callable[[str], Any] = load_record,
) -> Generator[Finished[P], None, None]:
    """Run ``points`` on ``devices``, one worker process each; yield records as they come.

    Use it in a ``with contextlib.closing(...)`` block: leaving the loop early stops
    the workers there and then.

    Args:
        worker: Picklable (a module-level function or a partial of one) callable
            ``(points, device) -> records``; it is called once per point with a
            one-point sequence and the device's ``target``, in the pinned process.
            Its records (models or JSON values) travel back as JSON text.
        points: The points, in sweep order.
        devices: The devices; each gets a share of the points balanced by ``cost``.
        failed: Called in the parent as ``failed(point, device, reason)`` for each
            point a worker did not finish, or whose record did not load; returns
            that point's failed record.
        cost: Estimated cost of a point (e.g. bytes moved); equal costs by default.
        decode: Turns a record's JSON text back into a record in the parent.

    Yields:
        One :class:`Finished` per record, in the order they arrive.

    Raises:
        ArgumentError: for no devices, or a cost that is negative or not finite (it is
            a ValueError too).
        KeyboardInterrupt: after an interrupt, once the workers are stopped and every
            record they had sent is yielded.
    """
    if not devices:
        raise ArgumentError(argument="devices", reason="expected at least one device")
    shares = partition(points, len(devices), cost=cost or (lambda _: 1.0))
    ctx = multiprocessing.get_context("spawn")
    blob = pickle.dumps(worker)
    workers: list[_Worker[P]] = []
    try:
        for device, share in zip(devices, shares, strict=True):
            if share:
                workers.append(_start(ctx, device, share, blob))
        live: dict[Any, _Worker[P]] = {w.reader: w for w in workers}
        try:
            while live:
                for reader in connection.wait(list(live)):
                    w = live[reader]
                    message = _receive(w)
                    if message is None:
                        del live[reader]
                        reason = w.ended()
                        if reason is not None:
                            for point in w.share[w.finished :]:
                                record = failed(point, w.device, reason)
                                yield Finished(w.device.name, point, record, worker_failed=True)
                        continue
                    yield from _handle(w, message, failed, decode)
        except KeyboardInterrupt:
            _stop(workers)
            # Keep every record a worker finished before it was stopped.
            for w in live.values():
                while (message := _receive(w)) is not None:
                    if message[0] == "record":
                        yield from _handle(w, message, failed, decode)
            raise
    finally:
        _stop(workers)
        for w in workers:
            w.reader.close()


def _receive(w: _Worker[Any]) -> list[Any] | None:
    """The next message of a worker, or None at its end (a truncated message included)."""
    try:
        return list(json.loads(w.reader.recv_bytes()))
    except (EOFError, OSError, ValueError):
        return None


def _handle(
    w: _Worker[P],
    message: list[Any],
    failed: Callable[[P, Device, str], Any],
    decode: Callable[[str], Any],
) -> Iterator[Finished[P]]:
    kind, index = message[0], message[1]
    if kind == "record":
        point = w.share[index]
        try:
            record = decode(message[2])
        except KernelIndexError as err:
            reason = f"the worker on {w.device.name} sent a record that does not load: {err}"
            yield Finished(w.device.name, point, failed(point, w.device, reason), True)
            return
        yield Finished(w.device.name, point, record)
    elif kind == "point":
        w.finished = index + 1
    elif kind == "error":
        w.error = message[2]
