"""One process's part of a JSD sweep: its shard, its GPU (or workers), and its output file.

``kernelindex bench jsd`` builds a :class:`JSDOptions` from its flags, calls
:func:`prepare_jsd` with it, prints :meth:`JSDSweep.describe`, and writes each record
:meth:`JSDSweep.run` passes it. The shard comes from ``--shard`` or the launcher's
variables (:func:`kernelindex_sdk.sharding.detect_launch`); ``--devices``
spreads the shard over one worker process per GPU
(:func:`kernelindex_sdk.reference_kernels.workers.run_on_devices`).

The sweep module (and with it Triton) is imported only once the device is chosen:
Triton reads ``TRITON_INTERPRET`` when a kernel is defined.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
import torch

from ..errors import LaunchError
from ..models import RecordBundle
from ..sharding import Launch, detect_launch, output_path
from .device import select_device
from .options import JSDOptions, options_from
from .workers import Device, Finished, cuda_devices, parse_devices, run_on_devices

if TYPE_CHECKING:
    from .jsd.sweep import Point

__all__ = ["CPU_WORKERS", "JSDOptions", "JSDSweep", "prepare_jsd", "resolve_devices"]

#: Set to ``1`` to let ``--devices cpu,cpu`` start CPU worker processes in place of GPUs:
#: a test hook. CPU workers prove the process plumbing, not the pinning or the timing.
CPU_WORKERS: Final = "KERNELINDEX_TEST_CPU_WORKERS"


def resolve_devices(text: str, environ: Mapping[str, str] | None = None) -> list[Device]:
    """The worker devices of ``--devices all|0,1,...`` among the GPUs visible here.

    Args:
        text: The option's value.
        environ: The environment to read; ``os.environ`` by default.

    Raises:
        LaunchError: for no visible GPU, an index that is not visible, a repeated one,
            or ``cpu`` entries without the :data:`CPU_WORKERS` test hook.
    """
    env = os.environ if environ is None else environ
    entries = [part.strip() for part in text.split(",")]
    if "cpu" in entries:
        if env.get(CPU_WORKERS) != "1" or any(e != "cpu" for e in entries):
            raise LaunchError(
                setting="--devices",
                reason=(
                    f"expected 'all' or comma-separated GPU indices, got {text!r}"
                    f" (CPU worker processes are a test hook: {CPU_WORKERS}=1)"
                ),
            )
        # The interpreter must be on before the worker imports Triton's kernels.
        return [
            Device(name=f"cpu:{i}", target="cpu", environ={"TRITON_INTERPRET": "1"})
            for i in range(len(entries))
        ]
    available = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return cuda_devices(parse_devices(text, available), env)


@attrs.frozen
class JSDSweep:
    """What this process of a JSD sweep runs, where, and where its records go.

    Attributes:
        launch: Its shard and GPU, and why (:func:`kernelindex_sdk.sharding.detect_launch`).
        out: The output path with ``{rank}`` and ``{host}`` filled in (``-``: stdout).
        device: Where the points run in this process; with workers, the kind of device.
        devices: The worker processes' devices; empty to run in this process.
        chosen: This shard's points, in sweep order.
        total: How many points the whole sweep holds.
        cost_share: This shard's fraction of the sweep's estimated cost.
        timer: The GPU timer.
    """

    launch: Launch
    out: str
    device: torch.device
    devices: tuple[Device, ...]
    chosen: tuple[Point, ...]
    total: int
    cost_share: float | None
    timer: str

    def describe(self) -> str:
        """The stderr line: which shard runs, why, and on which GPU or workers."""
        line = self.launch.describe(len(self.chosen), self.total, self.cost_share)
        if self.devices:
            names = ", ".join(d.name for d in self.devices)
            line += f"; one worker process per device: {names}"
        return line

    def run(self, write: Callable[[RecordBundle], None]) -> None:
        """Run the chosen points, passing each record to ``write`` as soon as it exists.

        A failing point never raises: it gives a failed record. With workers, records
        come in the order they finish, and the points of a worker that died give failed
        records. After Ctrl-C, whether it comes while waiting for the workers or while
        ``write`` runs, every record a worker had sent is passed on before
        KeyboardInterrupt is raised again.

        Args:
            write: Called once per record, in this process.

        Raises:
            KeyboardInterrupt: after an interrupt, once the finished records are written.
        """
        from .jsd import sweep

        if not self.devices:
            for record in sweep.run_points(self.chosen, self.device, timer=self.timer):
                write(record)
            return
        worker = functools.partial(sweep.work, timer=self.timer)
        lost = functools.partial(_lost, timer=self.timer)
        running = run_on_devices(
            worker, self.chosen, self.devices, failed=lost, cost=sweep.point_cost
        )
        with contextlib.closing(running):
            try:
                for finished in running:
                    write(finished.record)
            except KeyboardInterrupt:
                # Raised in write(), the interrupt never reached the pool: hand it over, so
                # that it stops the workers and gives what they had sent. (Raised by the
                # pool, it has given everything already, and this does nothing.)
                _drain(running, write)
                raise


def _drain(
    running: Generator[Finished[Point], None, None], write: Callable[[RecordBundle], None]
) -> None:
    try:
        finished = running.throw(KeyboardInterrupt())
        while True:
            write(finished.record)
            finished = next(running)
    except (KeyboardInterrupt, StopIteration):
        return


def _lost(point: Point, device: Device, reason: str, *, timer: str) -> RecordBundle:
    from .jsd import sweep

    # Device names count GPUs as this process sees them (cuda:1); CPU stand-ins are "cpu:N".
    where = torch.device(device.name) if device.name.startswith("cuda") else torch.device("cpu")
    return sweep.failed_record(point, where, reason, timer=timer)


def _choose_device(launch: Launch, workers: Sequence[Device]) -> tuple[Launch, torch.device]:
    if workers:
        # Each worker is pinned to its own device; the local rank picks none here.
        launch = attrs.evolve(launch, gpu=None, gpu_reason="")
        if workers[0].target == "cpu":
            return launch, select_device()
        # Not select_device(): the parent leaves CUDA alone, the workers use the GPUs.
        return launch, torch.device("cuda")
    if launch.gpu is not None:
        if not torch.cuda.is_available():
            return attrs.evolve(launch, gpu=None, gpu_reason=""), select_device()
        visible = torch.cuda.device_count()
        if launch.gpu >= visible:
            raise LaunchError(
                setting=launch.gpu_reason,
                reason=f"expected a GPU index below the {visible} visible, got {launch.gpu}",
            )
        torch.cuda.set_device(launch.gpu)
    return launch, select_device()


def prepare_jsd(
    options: JSDOptions | None = None,
    *,
    out: str = "-",
    shard: str | None = None,
    devices: str | None = None,
    environ: Mapping[str, str] | None = None,
    **fields: Any,
) -> JSDSweep:
    """Decide this process's part of a JSD sweep before anything runs or is written.

    Args:
        options: What the sweep covers and how it times it (:class:`JSDOptions`).
        out: The ``-o`` template (``{rank}``, ``{host}``) or ``-``.
        shard: ``--shard I/N``; None to take it from the launcher's variables.
        devices: ``--devices all|0,1,...``; None to run in this process.
        environ: The environment to read; ``os.environ`` by default.
        **fields: The options one by one instead of ``options``, as earlier versions
            took them (``providers=...``, ``tokens=...``): the same as
            ``prepare_jsd(JSDOptions(**fields), ...)``.

    Returns:
        The sweep part, ready to run with :meth:`JSDSweep.run`.

    Raises:
        LaunchError: for a bad ``--shard``, ``--devices`` or launcher variable, or an
            output without ``{rank}`` under a launcher of several processes.
        SweepOptionError: for an unusable option (from :func:`sweep.plan`).
        ArgumentError: for ``options`` and ``fields`` both given.
        StateError: when there is no GPU and Triton was imported before
            ``TRITON_INTERPRET=1`` was set (from ``device.select_device()``).
    """
    options = options_from(options, fields)
    env = os.environ if environ is None else environ
    launch = detect_launch(shard, env)
    path = output_path(out, launch)
    workers = resolve_devices(devices, env) if devices is not None else []
    launch, device = _choose_device(launch, workers)
    from .jsd import sweep

    planned = sweep.plan(options, device=device)
    every = sweep.points(options.providers, planned)
    chosen = launch.select(every, cost=sweep.point_cost)
    whole = sum(map(sweep.point_cost, every))
    share = sum(map(sweep.point_cost, chosen)) / whole if whole else None
    return JSDSweep(
        launch=launch,
        out=path,
        device=device,
        devices=tuple(workers),
        chosen=tuple(chosen),
        total=len(every),
        cost_share=share,
        timer=options.timer,
    )
