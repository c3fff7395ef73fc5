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

from .._base import arguments
from ..errors import ArgumentError

__all__ = ["JSDOptions", "options_from"]


# Each option's type is checked here (ArgumentError naming it); its values are checked by
# sweep.plan against the device. Lists become tuples: the options stay as they were built.
def _providers(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(arguments.texts(values, "providers"))


def _dtypes(values: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(arguments.texts(values, "dtypes"))


def _tokens(values: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(arguments.integers(values, "tokens"))


def _vocab(values: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(arguments.integers(values, "vocab"))


def _number(_: Any, attribute: attrs.Attribute[float], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(argument=attribute.name, reason=f"expected a number, got {value!r}")


def _text(_: Any, attribute: attrs.Attribute[str], value: Any) -> None:
    arguments.text(value, attribute.name)


@attrs.frozen(kw_only=True)
class JSDOptions:
    """What a JSD sweep covers and how it times it; ``JSDOptions()`` is the command's
    default sweep (``kernelindex bench jsd`` with no sweep flags).

    Building one checks each option's type (lists become tuples).
    :func:`kernelindex_sdk.reference_kernels.jsd.sweep.plan` checks the values against
    the device the sweep runs on (the default points differ between a GPU and the CPU)
    and raises :class:`~kernelindex_sdk.errors.SweepOptionError` naming the attribute
    (``providers``); the command line names its flag (``--impl``) instead.

    Raises:
        ArgumentError: (a ValueError) for an option of the wrong type: a str where a
            list of names belongs, a list holding other than ints for ``tokens`` or
            ``vocab``, a ``beta`` that is not a number, an ``input_grad`` or ``timer``
            that is not a str.

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

    providers: tuple[str, ...] = attrs.field(default=("torch", "triton"), converter=_providers)
    tokens: tuple[int, ...] | None = attrs.field(default=None, converter=_tokens)
    vocab: tuple[int, ...] | None = attrs.field(default=None, converter=_vocab)
    dtypes: tuple[str, ...] | None = attrs.field(default=None, converter=_dtypes)
    beta: float = attrs.field(default=0.5, validator=_number)
    input_grad: str = attrs.field(default="off", validator=_text)
    timer: str = attrs.field(default="cuda-events", validator=_text)


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
            reason=(
                "expected the options or their fields one by one, not both;"
                f" got {', '.join(map(repr, fields))} too"
            ),
        )
    return options
