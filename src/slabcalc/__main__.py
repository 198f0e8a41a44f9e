"""``python -m slabcalc``: the same as the ``slabcalc`` command."""

from slabcalc.cli import main

main()
