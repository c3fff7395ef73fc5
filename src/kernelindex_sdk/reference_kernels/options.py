"""The options of a JSD sweep, as one object: what it covers and how it times it.

``kernelindex bench jsd`` builds a :class:`JSDOptions` from its flags once and passes it
down whole: :func:`kernelindex_sdk.reference_kernels.launch.prepare_jsd`, then
:func:`kernelindex_sdk.reference_kernels.jsd.sweep.plan`, which checks it and turns it
into cases. This module imports neither torch nor Triton: Triton must not be imported
before the sweep's device is chosen (it reads ``TRITON_INTERPRET`` when a kernel is
defined), and the options exist before that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..errors import ArgumentError

__all__ = ["JSDOptions", "options_from"]


def _names(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _optional_names(values: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _optional_sizes(values: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(values)


@attrs.frozen(kw_only=True)
class JSDOptions:
    """What a JSD sweep covers and how it times it; ``JSDOptions()`` is the command's
    default sweep (``kernelindex bench jsd`` with no sweep flags).

    The options are kept as given. :func:`kernelindex_sdk.reference_kernels.jsd.sweep.plan`
    checks them against the device the sweep runs on (the default points differ between a
    GPU and the CPU) and raises :class:`~kernelindex_sdk.errors.SweepOptionError` naming
    the attribute (``providers``); the command line names its flag (``--impl``) instead.

    Attributes:
        providers: Names from :data:`~kernelindex_sdk.reference_kernels.jsd.sweep.PROVIDERS`.
        tokens: Rows BT; None for the device's default.
        vocab: Vocabulary sizes V; None for the device's default.
        dtypes: Names from :data:`~kernelindex_sdk.reference_kernels.jsd.sweep.DTYPES`;
            None for the device's default.
        beta: Weight of P in the mixture, in [0, 1].
        input_grad: ``off`` (the loss alone), ``on`` (a training step, the loss and
            dL/dinput) or ``both``.
        timer: One of :data:`~kernelindex_sdk.reference_kernels.harness.TIMERS`.
    """

    providers: tuple[str, ...] = attrs.field(default=("torch", "triton"), converter=_names)
    tokens: tuple[int, ...] | None = attrs.field(default=None, converter=_optional_sizes)
    vocab: tuple[int, ...] | None = attrs.field(default=None, converter=_optional_sizes)
    dtypes: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_names)
    beta: float = 0.5
    input_grad: str = "off"
    timer: str = "cuda-events"


def options_from(options: JSDOptions | None, fields: Mapping[str, Any]) -> JSDOptions:
    """The options of a call that takes them whole or, as earlier versions did, one by one.

    Args:
        options: The options object, or None.
        fields: The keyword arguments given instead (``providers=...``, ``tokens=...``).

    Returns:
        ``options``, else ``JSDOptions(**fields)``.

    Raises:
        ArgumentError: when both are given.
        TypeError: for a keyword that names no option, as Python raises for any call.
    """
    if options is None:
        return JSDOptions(**fields)
    if fields:
        raise ArgumentError(
            argument="options",
            reason=f"expected the options or their fields, not both; got {', '.join(fields)} too",
        )
    return options
