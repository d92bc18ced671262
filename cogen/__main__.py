"""``python -m cogen`` runs the command line (as the ``cogen`` console script does)."""

from cogen.cli import entry

if __name__ == "__main__":  # not when a spawned worker process imports the main module
    entry()
