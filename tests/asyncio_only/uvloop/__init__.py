"""Not uvloop: importing it fails, as where uvloop is not installed.

:func:`tests.server_process.loop_env` puts this folder first on a server process's
``PYTHONPATH`` when ``MCP_ELICIT_TEST_LOOP=asyncio``, so that the server (uvicorn's ``loop="auto"``,
the stdio server) runs on asyncio's loop whatever the script does.
"""

raise ImportError("uvloop is hidden here: MCP_ELICIT_TEST_LOOP=asyncio runs this process on asyncio's loop")
