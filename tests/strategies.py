"""Hypothesis strategies more than one property test draws from."""

from __future__ import annotations

from hypothesis import strategies as st

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
