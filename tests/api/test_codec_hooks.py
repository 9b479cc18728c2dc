"""The compiled quantity hooks (kuota.api.hooks) convert exactly as the
reference ones in kuota.api.base, whatever they have cached."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kuota.api import base, hooks
from kuota.api.quantity import Quantity

TEXTS = st.sampled_from(
    ["0", "1", "500m", "1.5", "2Gi", "1e3", "100M", "0.1", "7Ki", "3n"]
) | st.builds(
    lambda n, s: f"{n}{s}", st.integers(0, 10**6), st.sampled_from(["", "m", "k", "Mi", "G"])
)


@settings(max_examples=200, deadline=None)
@given(text=TEXTS)
def test_the_hooks_agree_with_the_reference_ones(text: str) -> None:
    q = Quantity(text)
    assert hooks.enc_hook(q) == base.enc_hook(q) == str(q)
    assert hooks.enc_hook(q) == str(q)  # again, from the cache
    decoded = hooks.dec_hook(Quantity, text)
    assert decoded == base.dec_hook(Quantity, text) and isinstance(decoded, Quantity)
    assert str(hooks.dec_hook(Quantity, text)) == str(base.dec_hook(Quantity, text))


def test_a_new_quantity_in_a_freed_ones_place_gets_its_own_text() -> None:
    """The text cache is keyed by identity and holds the quantity: one made
    after another is gone (and may take its memory) is not given its text."""
    for i in range(200):
        q = Quantity.from_milli(i * 7 + 1)
        assert hooks.enc_hook(q) == str(q)
        del q


def test_other_values_go_to_the_reference_hooks() -> None:
    with pytest.raises(NotImplementedError):
        hooks.enc_hook(object())
    with pytest.raises(NotImplementedError):
        hooks.dec_hook(complex, "1")
    assert hooks.dec_hook(Quantity, 3) == Quantity("3")
