"""``mcp-elicit schema lint FILE``: where a hand-written requestedSchema leaves the subset."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_elicit.cli import EXIT_FAILURE, EXIT_OK, EXIT_TOOL_ERROR, write_output
from mcp_elicit.schema import check_schema, lint_form
from mcp_elicit.schema.text import pointer, show_pointer


def _read(file: str) -> str:
    return sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")


def run_lint(file: str, message: str) -> int:
    try:
        schema = json.loads(_read(file))
    except OSError as exc:
        print(f"mcp-elicit: cannot read {file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILURE
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        print(f"mcp-elicit: {file} is not JSON: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except RecursionError:  # the decoder recurses once per level
        print(f"mcp-elicit: {file} is nested too deeply to read", file=sys.stderr)
        return EXIT_FAILURE
    problems = check_schema(schema)
    for problem in problems:
        # Names in a schema are anyone's text (a file saved from a server): escaped, cut short.
        write_output(f"{show_pointer(problem.pointer) or '/'}: {problem.reason}")
    if problems:
        print(f"{file}: {len(problems)} problem(s): outside the elicitation schema subset", file=sys.stderr)
        return EXIT_TOOL_ERROR
    lint = lint_form(message, schema)
    for finding in lint.secret_fields:
        write_output(
            f"{show_pointer(pointer('properties', finding.field))}: asks for a secret ({finding.category}, "
            f"its {finding.where} says {finding.matched!r}); forms must not collect secrets, use URL mode"
        )
    for warning in lint.url_warnings:
        write_output(f"warning: {warning}")
    if lint.secret_fields:
        print(f"{file}: asks for secrets in form mode", file=sys.stderr)
        return EXIT_TOOL_ERROR
    write_output(f"{file}: inside the subset" + (" (with warnings)" if lint.url_warnings else ""))
    return EXIT_OK
