"""``python -m ssewire``: the ``ssewire`` command (see ``ssewire._cli``)."""

import sys

from ssewire._cli import main

if __name__ == "__main__":
    sys.exit(main())
