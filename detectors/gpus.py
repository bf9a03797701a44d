"""GPU model → compute capability, for the BF16-vs-FP16 diagnosis (log-formats.md §8.1)."""

from __future__ import annotations

import re

__all__ = ["compute_capability", "has_native_bf16"]

# most specific first
_TABLE: list[tuple[str, float]] = [
    (r"GB300|B300", 10.3), (r"GB200|B200|B100", 10.0), (r"RTX PRO 6000|RTX 50\d0", 12.0), (r"GB10\b", 12.1),
    (r"GH200|H200|H100|H800", 9.0),
    (r"L40S|L40|L4\b|RTX 6000 Ada|RTX 40\d0", 8.9),
    (r"A100|A800|A30\b", 8.0),
    (r"A10G|A10\b|A16\b|A2\b|A40\b|RTX A\d000|RTX 30\d0", 8.6),
    (r"Orin", 8.7),
    (r"T4\b|Quadro RTX|RTX 20\d0|GTX 16\d0|TITAN RTX", 7.5),
    (r"V100|Titan V|TITAN V", 7.0),
    (r"P40|P4\b|GTX 10\d0", 6.1),
    (r"P100", 6.0),
    (r"M40|M60", 5.2),
    (r"K80", 3.7),
]
_COMPILED = [(re.compile(p), cc) for p, cc in _TABLE]


def compute_capability(gpu: str | None) -> float | None:
    if not gpu:
        return None
    for rx, cc in _COMPILED:
        if rx.search(gpu):
            return cc
    return None


def has_native_bf16(cc: float | None) -> bool | None:
    return None if cc is None else cc >= 8.0
