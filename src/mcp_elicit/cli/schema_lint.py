"""``mcp-elicit schema lint FILE``: where a hand-written requestedSchema leaves the subset.

Every problem is reported in one pass: the places outside the subset and the fields that ask for
secrets together (a schema outside the subset is still linted for secrets), so that fixing what
is shown never uncovers more.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mcp_elicit.cli import EXIT_FAILURE, EXIT_OK, EXIT_TOOL_ERROR, write_output
from mcp_elicit.schema import check_schema, lint_form
from mcp_elicit.schema.text import pointer, show_pointer


@dataclass(frozen=True, slots=True)
class LintReport:
    """What the lint of one schema found, as the lines it prints."""

    outside_subset: list[str] = field(default_factory=list)
    secret_fields: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every line that makes the lint fail, subset first."""
        return [*self.outside_subset, *self.secret_fields]


def lint_schema(schema: object, message: str = "") -> LintReport:
    """Lint a schema read from JSON (anything: never raises)."""
    report = LintReport()
    for problem in check_schema(schema):
        # Names in a schema are anyone's text (a file saved from a server): escaped, cut short.
        report.outside_subset.append(f"{show_pointer(problem.pointer) or '/'}: {problem.reason}")
    lint = lint_form(message, schema if isinstance(schema, dict) else {})
    for finding in lint.secret_fields:
        report.secret_fields.append(
            f"{show_pointer(pointer('properties', finding.field))}: asks for a secret ({finding.category}, "
            f"its {finding.where} says {finding.matched!r}); forms must not collect secrets, use URL mode"
        )
    report.warnings.extend(f"warning: {warning}" for warning in lint.url_warnings)
    return report


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
    report = lint_schema(schema, message)
    for line in [*report.problems, *report.warnings]:
        write_output(line)
    found = []
    if report.outside_subset:
        found.append("outside the elicitation schema subset")
    if report.secret_fields:
        found.append("asks for secrets in form mode")
    if found:
        count = len(report.problems)
        print(f"{file}: {count} problem(s): {', and '.join(found)}", file=sys.stderr)
        return EXIT_TOOL_ERROR
    write_output(f"{file}: inside the subset" + (" (with warnings)" if report.warnings else ""))
    return EXIT_OK
