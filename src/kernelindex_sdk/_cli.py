"""Command line: placeholder until written."""
