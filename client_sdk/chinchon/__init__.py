"""Chinchón: rules engine (chinchon.engine), wire types (chinchon.v1), bot SDK (chinchon.sdk)."""

__version__ = "0.1.0"
