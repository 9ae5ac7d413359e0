from mcp_elicit.cli import entry

entry()
