"""One Liger CSV row read into checked values: a field that cannot be used raises ValueError."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Final

import attrs

from ..._base.display import short_repr
from .._csvfile import BLANKS
from .._values import check_parameter, parse_config, parse_float, parse_number
from ._tables import COLUMNS, DEFAULT_DTYPE, DTYPES, METRICS, PASSES

__all__ = ["Row"]

#: Schema pattern of a workload's operation; a kernel name outside it is refused, not renamed.
_OPERATION: Final = re.compile(r"[a-z0-9][a-z0-9_]*\Z")
_OPERATION_MAX: Final = 128


def _dtype(value: Any) -> Any:
    # Spellings of one torch dtype are one value: torch.float and torch.float32 are fp32.
    return DTYPES.get(value, value) if isinstance(value, str) else value


def _observed_at(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"timestamp is not ISO 8601: {short_repr(text)}") from None
    # Liger writes UTC without an offset.
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(
            f"timestamp {short_repr(text)} falls outside the years 1 to 9999 in UTC"
        ) from None


def _measured(text: str, what: str) -> float:
    value = parse_float(text, what)
    if value is None:
        raise ValueError(f"{what} is not a number: {short_repr(text)}")
    if value < 0:
        raise ValueError(f"{what} must be a number >= 0, got {short_repr(text)}")
    return value


@attrs.frozen
class Row:
    """One CSV row, parsed and checked."""

    kernel: str
    provider: str
    mode: str
    metric: str
    unit: str
    ys: tuple[float, float, float]  # p20, p50, p80
    config: dict[str, Any]
    x_name: str
    x_value: Any
    observed: datetime
    version: str
    gpu: str

    @classmethod
    def parse(cls, row: dict[str, str]) -> Row:
        """Raises ValueError naming the first field that cannot be used."""
        fields = {k: row[k].strip(BLANKS) for k in COLUMNS}
        mode, metric, unit = (
            fields[k] for k in ("kernel_operation_mode", "metric_name", "metric_unit")
        )
        if mode not in PASSES:
            raise ValueError(
                f"unknown kernel_operation_mode {short_repr(mode)}; known: {', '.join(PASSES)}"
            )
        if metric not in METRICS:
            raise ValueError(
                f"unknown metric_name {short_repr(metric)}; known: {', '.join(METRICS)}"
            )
        if unit not in METRICS[metric][0]:
            raise ValueError(
                f"{metric} in {short_repr(unit)};"
                f" expected {', '.join(map(repr, METRICS[metric][0]))}"
            )
        for required in ("kernel_name", "kernel_provider", "gpu_name", "x_name", "x_value"):
            if not fields[required]:
                raise ValueError(f"{required} must not be empty")
        kernel = fields["kernel_name"]
        if len(kernel) > _OPERATION_MAX or not _OPERATION.match(kernel):
            raise ValueError(
                f"kernel_name {short_repr(kernel)} is not an operation name"
                " (lowercase letters, digits and '_', at most 128)"
            )
        p20, p50, p80 = (
            _measured(fields[f"y_value_{q}"], f"y_value_{q}") for q in ("20", "50", "80")
        )
        x_name = fields["x_name"]
        x_value = parse_number(fields["x_value"], "x_value")
        return cls(
            kernel=kernel,
            provider=fields["kernel_provider"],
            mode=mode,
            metric=metric,
            unit=unit,
            ys=(p20, p50, p80),
            config=parse_config(fields["extra_benchmark_config_str"], "extra_benchmark_config_str"),
            x_name=x_name,
            x_value=fields["x_value"] if x_value is None else x_value,
            observed=_observed_at(fields["timestamp"]),
            version=fields["liger_version"],
            gpu=fields["gpu_name"],
        )

    def parameters(self) -> dict[str, Any]:
        """What was computed: the x value, every config entry, and the dtype.

        A config entry named like the x value holds that value or null ("see x"); the
        x value stands for both.

        Raises:
            ValueError: for a value no parameter can hold (null included, except for the
                entry named like the x value), or a config entry named like the x value
                but with another value (one of the two would be lost).
        """
        x_value = _dtype(check_parameter(self.x_name, self.x_value, "x_value"))
        parameters: dict[str, Any] = {self.x_name: x_value}
        for key, value in self.config.items():
            if key == self.x_name and value is None:
                # The swept dimension written as null means "see x" (Liger's fused_moe
                # rows: x_name T, config {"sweep_dim": "T", "T": null, ...}). Any other
                # null is refused below, as every parameter that is not a scalar.
                continue
            checked = _dtype(check_parameter(key, value, "extra_benchmark_config_str"))
            if key == self.x_name:
                if checked != x_value or type(checked) is not type(x_value):
                    raise ValueError(
                        f"x_name {short_repr(key)} is {short_repr(x_value)} but"
                        f" extra_benchmark_config_str has {short_repr(key)}: {short_repr(checked)}"
                    )
                continue
            parameters[key] = checked
        parameters.setdefault("dtype", DEFAULT_DTYPE)
        return parameters
