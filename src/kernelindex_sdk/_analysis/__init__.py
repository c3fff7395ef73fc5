"""The private parts of compare, report and merge: runs, families, tables, rendering and plots.

:mod:`kernelindex_sdk.compare`, :mod:`kernelindex_sdk.report` and
:mod:`kernelindex_sdk.merge` are the public faces, independent of each other; what two of
them share lives here. Nothing here imports them back (an import-linter contract).
"""
