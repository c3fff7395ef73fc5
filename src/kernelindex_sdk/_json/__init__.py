"""Strict JSON (private): the text parser, the value walk and checks, the published form,
and the cattrs converter between the generated models and JSON values.

Above :mod:`kernelindex_sdk._base` and the models, below digests and validation.
"""
