"""The bundled demo: an issue tracker server whose tools ask the person, the URL-mode kit with a
DEMO ONLY identity and sign-in, and a DEMO ONLY third-party OAuth provider (the "CI service").
``mcp-elicit demo`` runs them (``python -m mcp_elicit.demo``) and drives them end to end."""

from mcp_elicit._extras import require

require("connect", part="the demo (mcp_elicit.demo)")
