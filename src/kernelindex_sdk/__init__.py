"""kernelindex-sdk: produce and check GPU kernel benchmark records (kernelindex.dev/v1alpha1).

The public API: load records into generated attrs models, dump them in the published
form, validate documents, and compute digests. ``import kernelindex_sdk`` never
imports torch or Triton; :mod:`kernelindex_sdk.reference_kernels` does.
"""

from ._schemas import API_VERSION
from ._version import __version__
from .convert import (
    configure_converter,
    dump,
    dumps,
    load_environment,
    load_protocol,
    load_record,
    load_run,
    make_converter,
)
from .errors import (
    KernelIndexError,
    Problem,
    SchemaValidationError,
    UnsupportedSourceError,
)
from .validation import check, validate

__all__ = [
    "API_VERSION",
    "KernelIndexError",
    "Problem",
    "SchemaValidationError",
    "UnsupportedSourceError",
    "__version__",
    "check",
    "configure_converter",
    "dump",
    "dumps",
    "load_environment",
    "load_protocol",
    "load_record",
    "load_run",
    "make_converter",
    "validate",
]
