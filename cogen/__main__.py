"""``python -m cogen`` runs the command line."""

from cogen.cli import main

if __name__ == "__main__":  # not when a spawned worker process imports the main module
    main()
