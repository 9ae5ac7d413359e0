"""What README.md and docs/protocol.md say the project was tried with is what the repository
runs: every test they name exists, the versions they name are the pinned ones, and the
conformance scenarios they call left out are the ones scripts/conformance.sh leaves out."""

from __future__ import annotations

import re

from tests.docs.markdown_blocks import REPO, doc

PROTOCOL = doc("protocol.md").read_text()
README = doc("README.md").read_text()
CONFORMANCE = (REPO / "scripts" / "conformance.sh").read_text()
NODE = (REPO / "scripts" / "node.sh").read_text()


def pinned(variable: str) -> str:
    found = re.search(rf'^{variable}="([^"]+)"$', NODE, flags=re.MULTILINE)
    assert found, variable
    return found.group(1)


def scenarios() -> dict[str, list[str]]:
    lists = re.findall(
        r"^(\w+_SCENARIOS(?:_2025)?)=\(\n(.*?)\n\)", CONFORMANCE, flags=re.DOTALL | re.MULTILINE
    )
    return {name: body.split() for name, body in lists}


def test_every_test_named_exists() -> None:
    named = set(re.findall(r"`(tests/[\w/]+\.py)`", PROTOCOL))
    assert len(named) >= 6
    for path in named:
        assert (REPO / path).is_file(), path


def test_the_versions_named_are_the_pinned_ones() -> None:
    sdk = f"@modelcontextprotocol/sdk@{pinned('TS_SDK_V1_VERSION')}"
    v2 = pinned("TS_SDK_V2_VERSION")
    sdk_v2 = (f"@modelcontextprotocol/client@{v2}", f"@modelcontextprotocol/server@{v2}")
    suite = f"@modelcontextprotocol/conformance@{pinned('CONFORMANCE_VERSION')}"
    assert '"mcp==2.3.0"' in (REPO / "pyproject.toml").read_text()
    for text in (README, PROTOCOL):
        assert "mcp==2.3.0" in text
        assert sdk in text
        assert all(package in text for package in sdk_v2)
    assert suite in README
    assert pinned("CONFORMANCE_VERSION") in PROTOCOL
    assert suite in doc("CONTRIBUTING.md").read_text()


def test_the_scenarios_said_to_be_left_out_are_left_out() -> None:
    run = scenarios()
    assert set(run) == {
        "SERVER_SCENARIOS",
        "LEGACY_SERVER_SCENARIOS",
        "CLIENT_SCENARIOS",
        "CLIENT_SCENARIOS_2025",
    }
    everything = {name for names in run.values() for name in names}
    for left_out in ("completion-complete", "json-schema-2020-12"):
        assert f"`{left_out}`" in PROTOCOL
        assert left_out not in everything
    assert not any(name.startswith("auth/") for name in everything)
    for named in ("server-stateless", "input-required-result-basic-elicitation"):
        assert named in run["SERVER_SCENARIOS"]
    assert "elicitation-sep1034-defaults" in run["LEGACY_SERVER_SCENARIOS"]
    assert "sse-retry" in run["CLIENT_SCENARIOS_2025"]


def test_the_readme_names_the_scenarios_left_out() -> None:
    for left_out in ("completion-complete", "json-schema-2020-12", "auth/*"):
        assert f"`{left_out}`" in README, left_out
