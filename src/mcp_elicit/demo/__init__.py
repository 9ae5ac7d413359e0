"""The bundled demo: an issue tracker server whose tools ask the person, and a local page that
stands in for a third-party service in the URL-mode step. ``mcp-elicit demo`` runs both."""
