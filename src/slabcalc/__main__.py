"""``python -m slabcalc``: the same as the ``slabcalc`` command."""

from .cli import main

main()
