"""The base layer, under everything but errors (private).

The packaged schema files and their constants, timestamps, number parsing, names, text
that is safe to print, atomic file writes and the noise rule. These modules import only
:mod:`kernelindex_sdk.errors` and each other, so the generated models can use them.
"""
