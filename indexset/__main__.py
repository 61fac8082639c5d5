"""``python -m indexset``: the command line."""

from indexset.cli.main import entry

entry()
