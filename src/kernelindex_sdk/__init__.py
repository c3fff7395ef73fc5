"""kernelindex-sdk: produce and check GPU kernel benchmark records (kernelindex.dev/v1alpha1).

The public API: load records into generated attrs models, dump them in the published
form, validate documents, and compute digests. ``import kernelindex_sdk`` never
imports torch or Triton; :mod:`kernelindex_sdk.reference_kernels` does.
"""

from ._base.schemas import API_VERSION, SAFE_INT, export_schemas, self_contained_schema
from ._version import __version__
from .convert import (
    as_json,
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
    ArgumentError,
    CanonicalizationError,
    KernelIndexError,
    Problem,
    SchemaValidationError,
    TimestampError,
    UnsupportedSourceError,
)
from .validation import check, validate

__all__ = [
    "API_VERSION",
    "SAFE_INT",
    "ArgumentError",
    "CanonicalizationError",
    "KernelIndexError",
    "Problem",
    "SchemaValidationError",
    "TimestampError",
    "UnsupportedSourceError",
    "__version__",
    "as_json",
    "check",
    "configure_converter",
    "dump",
    "dumps",
    "export_schemas",
    "load_environment",
    "load_protocol",
    "load_record",
    "load_run",
    "make_converter",
    "self_contained_schema",
    "validate",
]
