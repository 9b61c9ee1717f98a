"""Sample bots written in Python against the engine's Bot protocol."""
