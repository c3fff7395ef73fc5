"""Importers: one module per foreign benchmark format, each yielding validated record bundles.

:mod:`~kernelindex_sdk.importers.liger` (Liger-Kernel's CSV),
:mod:`~kernelindex_sdk.importers.nvbench`, :mod:`~kernelindex_sdk.importers.gbench`
(Google Benchmark), :mod:`~kernelindex_sdk.importers.pytest_benchmark` and
:mod:`~kernelindex_sdk.importers.tritonbench`; each has ``read``, ``read_files`` and
``import_files``, the last returning an :class:`ImportSummary`.
"""

from ._output import ImportSummary

__all__ = ["ImportSummary"]
