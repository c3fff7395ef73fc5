"""Importers: one module per foreign benchmark format, each yielding validated record bundles."""
