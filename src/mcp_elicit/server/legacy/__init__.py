"""Serving MCP 2025-11-25 clients from the same handlers: the session (:mod:`.session`) and the
bridge that sends a call's questions as real requests (:mod:`.bridge`)."""
