"""The private parts of compare, report and merge: runs, tables, rendering and plots.

:mod:`kernelindex_sdk.compare` and :mod:`kernelindex_sdk.report` are the public faces.
Nothing here imports them back: rendering and plotting take what they draw as arguments.
"""
