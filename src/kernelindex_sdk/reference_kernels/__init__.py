"""Reference GPU kernels and the benchmark harness (extra ``[bench]``: torch, Triton).

Importing this subpackage imports torch; ``import kernelindex_sdk`` never does.
"""
