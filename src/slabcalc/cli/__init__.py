"""The command line: a thin layer over the library, one module per command (``commands/``).

``group`` holds the ``slabcalc`` group and the entry point, ``options`` every shared
option (defined once), ``common`` the settings and input handling the commands
share, ``tables`` every table's columns, ``output`` the rendering and ``plot`` the
plots; the ``*_output`` modules print what a command found.  Importing this package
registers every command on the group.
"""

from slabcalc.cli.commands import classes, compare, optimize, place, profiles, report, simulate, sql, stats  # noqa: F401
from slabcalc.cli.group import cli, main

__all__ = ["cli", "main"]
