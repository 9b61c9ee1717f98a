"""The Chinchón referee: gRPC server, tournaments, storage and the `chinchon` command."""

__version__ = "0.1.0"
