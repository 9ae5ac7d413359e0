"""Transports: thin shells that move bytes to and from ``Server.dispatch``."""
