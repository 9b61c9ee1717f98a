"""The ``chinchon`` command: one module per subcommand (``serve``, ``tournament``,
``admin``, ``practice``, ``records``, ``db``, and the engine's own ``demo``, ``replay``
and ``rules`` in ``main``), the organizer's admin client, and the record files they read
and write. Nothing here is imported by the server's other packages."""

from .main import main

__all__ = ["main"]
