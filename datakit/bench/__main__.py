"""``python -m datakit.bench [FOLDER] [--model saved.keras]``: see :mod:`datakit.bench.command`."""

import sys

from datakit.bench.command import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
