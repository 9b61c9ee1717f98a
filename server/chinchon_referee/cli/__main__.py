"""``python -m chinchon_referee.cli``: the ``chinchon`` command."""

import sys

from .main import main

sys.exit(main())
