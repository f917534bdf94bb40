"""``python -m deflectbench``: the same as the ``deflectbench`` command."""

from deflectbench.cli import main

main()
