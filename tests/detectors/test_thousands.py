"""Whole numbers written with thousands separators.

OLMo's console logger prints every metric ``key=value`` on its own line with Python's ``{:,}``
for large values (``train/Perplexity=195,153``, ``throughput/total_tokens=1,048,576``, as in
allenai/OLMo issue threads and corpus h15a-031): the value is 195153, not 195 (a perplexity read
as 195 is a loss of 5.3 nats where the run was at 12.2). A comma before a key
(``loss=1,lr=0.1``) stays a separator, and a leading zero (``0,123``) is no thousands group.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from detectors.parsers import fastfields
from detectors.parsers.fields import extract


@pytest.mark.parametrize("read", [extract, fastfields.extract])
def test_a_grouped_whole_number_is_one_value(read: Callable[[str], dict[str, float]]) -> None:
    got = read("    train/Perplexity=195,153")
    assert got["ppl"] == 195153.0 and math.isclose(got["loss"], math.log(195153.0))
    assert read("loss: 1,234,567.5")["loss"] == 1234567.5


@pytest.mark.parametrize("read", [extract, fastfields.extract])
def test_a_comma_before_a_key_or_after_a_zero_is_no_group(read: Callable[[str], dict[str, float]]) -> None:
    assert read("loss=1,lr=0.1") == {"loss": 1.0, "lr": 0.1}
    assert read("step 3 loss 0,123")["loss"] == 0.0
