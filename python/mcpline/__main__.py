"""``python -m mcpline``: the command line."""

from mcpline._cli import main

raise SystemExit(main())
