"""The command line: a thin layer over the library, one module per command (``commands/``).

``group`` holds the ``slabcalc`` group and the entry point, ``options`` every shared
option (defined once), ``common`` the settings and input handling the commands
share, ``tables`` every table's columns, ``output`` the rendering and ``plot`` the
plots; the ``*_output`` modules print what a command found.  Commands are imported when
they run, or when help lists them (``group.COMMANDS``).
"""

from slabcalc.cli.group import cli, main

__all__ = ["cli", "main"]
