"""``python -m kernelindex_sdk`` runs the ``kernelindex`` command."""

from ._cli import main

raise SystemExit(main())
