"""``python -m cogen`` runs the command line."""

from cogen.cli import main

main()
