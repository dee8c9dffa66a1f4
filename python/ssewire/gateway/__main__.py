"""``python -m ssewire.gateway``: the same as ``ssewire gateway``."""

import sys

from ssewire.gateway import main

sys.exit(main())
