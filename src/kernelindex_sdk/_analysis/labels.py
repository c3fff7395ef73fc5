"""How a run's environment is named in a table: its GPU, or a short digest.

:mod:`kernelindex_sdk.compare` and :mod:`kernelindex_sdk.report` both label runs so;
the public name is ``kernelindex_sdk.compare.environment_label``.
"""

from __future__ import annotations

from .._base import arguments as _arguments
from .runs import Run, RunSet, short_digest

__all__ = ["environment_label"]


def environment_label(run: Run, *sets: RunSet) -> str:
    """The run's GPU (``hardware.product``) when an environment object is known, else a digest.

    Raises:
        ArgumentError: when ``run`` is not a Run or a set is not a RunSet.
    """
    _arguments.instance(run, Run, "run")
    for s in sets:
        _arguments.instance(s, RunSet, "sets")
        spec = s.objects.get(run.environment_digest)
        if isinstance(spec, dict):
            product = spec.get("hardware", {}).get("product")
            if product:
                return str(product)
    return short_digest(run.environment_digest)
