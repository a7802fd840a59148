"""``python -m normalize_errors`` runs the command line."""

from ._cli import main

raise SystemExit(main())
