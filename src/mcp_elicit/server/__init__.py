"""The server side: what handlers are written against, and the engine that runs them.

* :mod:`.app` -- :class:`~mcp_elicit.server.app.Server`: registration, routing, ``run*``;
* :mod:`.engine` -- one round of a call, complete or needing input (its docstring is the tour);
* :mod:`.context` -- :class:`~mcp_elicit.server.context.Context`, what a handler asks with;
* :mod:`.round`, :mod:`.record`, :mod:`.replay` -- a round's bookkeeping, the sealed record
  between rounds, and running a handler until every branch has asked;
* :mod:`.gating` -- never an input request the client did not declare it can answer;
* :mod:`.registry`, :mod:`.signature`, :mod:`.results` -- tools, prompts and resources.

Nothing here imports the transports, the client, the connect kit or the CLI.
"""
