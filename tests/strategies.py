"""Hypothesis strategies more than one property test draws from."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st


def fuzz_settings(examples: int) -> settings:
    """Settings of a property test that runs a real server per example through pytest fixtures:
    no deadline (the machine is shared), fixtures reused across examples on purpose, and large
    draws (hostile bodies, tokens, documents) allowed."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


def hunt_phases() -> tuple[Phase, ...]:
    """The phases of a hunt whose every example is a real exchange (a process, a server, a
    connection): never ``explain``, which reruns a failing example hundreds of times; and in CI
    (``CI`` set) no ``shrink`` either. Shrinking such a hunt can outlast its watchdog, which then
    ends the whole run with no test summary; in CI the failing example is printed as found instead
    (the same test run locally shrinks what it finds)."""
    phases = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
    return phases[:-1] if os.environ.get("CI") else phases


# Any JSON value, a few levels deep (no NaN or infinity: JSON has neither).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def past_64_bits(value: object) -> bool:
    """Whether ``value`` holds an integer outside -2**63 .. 2**64 - 1 anywhere: a message holding
    one is refused whole (wire/codec.loads), never read rounded."""
    if isinstance(value, dict):
        return any(past_64_bits(item) for item in value.values())
    if isinstance(value, list):
        return any(past_64_bits(item) for item in value)
    return type(value) is int and not -(2**63) <= value <= 2**64 - 1
