"""``python -m sdckit``: the command line, as the ``sdckit`` console script runs it."""

from sdckit.cli import main

main()
