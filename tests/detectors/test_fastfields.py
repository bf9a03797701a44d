"""The fast field extraction (detectors/parsers/fastfields.py) gives exactly what the
general one (detectors/parsers/fields.py) gives: on every line and ``\\r`` segment of the
real corpora, the fixtures and the golden cases, and on generated metric-like lines.

Values are compared by their repr, so a NaN equals a NaN and -0.0 differs from 0.0.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.parsers import fastfields, fields

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "tests" / "corpus", ROOT / "tests" / "detectors" / "fixtures", ROOT / "tests" / "e2e" / "golden",
           ROOT.parent / "shared" / "real-logs"]


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return list(a) == list(b) and all(repr(a[k]) == repr(b[k]) for k in a)


def _segments() -> Iterator[str]:
    for src in SOURCES:
        if not src.is_dir():
            continue
        for path in sorted(src.rglob("*")):
            if not path.is_file() or path.suffix in (".json", ".py", ".md", ".png", ".gz"):
                continue
            text = path.read_bytes().decode("utf-8", "replace")
            for line in text.split("\n"):
                yield from line.split("\r")


def test_the_fast_pattern_is_derived() -> None:
    # if fields' pattern changed shape beyond what fastfields can derive, this says so
    # (the fast path would silently fall back to the general one: exact, but slow)
    assert fastfields._FAST is not None
    assert "(?P<key>(?:" in fastfields._FAST.pattern  # the keys became a trie


def test_same_fields_on_every_line_of_the_corpora() -> None:
    lines = 0
    metric_lines = 0
    differ: list[str] = []
    seen: set[str] = set()
    for seg in _segments():
        lines += 1
        if seg in seen:
            continue  # both extractions are pure functions of the text: a repeated line gives what it gave
        seen.add(seg)
        general = fields.extract(seg)
        metric_lines += bool(general)  # (distinct lines)
        records = fields.extract_records(seg)
        fast = fastfields.extract_records(seg)
        if len(fast) != len(records) or not all(_same(a, b) for a, b in zip(fast, records, strict=True)):
            differ.append(seg[:200])
    assert not differ, differ[:5]
    assert lines > 10_000 and metric_lines > 500  # the corpora were found and hold metric lines


def test_metric_lines_of_many_shapes() -> None:
    cases = [
        "2024-12-18 06:23:17,747 - INFO - train - step 1/1000000 | loss 10.75 | grad_norm 4.25 | loss_scale 65536.0",
        "{'loss': 10.7635, 'grad_norm': 4.2534332275390625, 'learning_rate': 1.5e-07, 'epoch': 0.000106}",
        '{"loss": NaN, "grad_norm": -Infinity, "global_step/max_steps": "8280/11043"}',
        "step 3 | Loss: +NAN | Grad-Norm: INF | eval/loss 2.0 | val_grad_norm 3 | valid_loss 1.5 | test_loss 9",
        "iteration 4/ 10 | lm loss: 1.1E+01 | loss scale: 16384.0 | grad norm: -nan | iter 2.5 | steps -3",
        "train/loss=tensor(1.5, device='cuda:0') losses/loss_step 3 metrics.gnorm 0.5 optimizer_lr 1e-3",
        "loss is nan, skipping batch; global step 7; num_updates=8; iters 1e3; epoch 1.",
        "LOSS=.5 GRAD_NORM=5. Loss_Scale=2 lossscale 4 cur_scale 8 validation loss 3",
    ]
    for line in cases:
        assert _same(fastfields.extract(line), fields.extract(line)), line
    assert math.isnan(fastfields.extract("step 3 | loss -nan")["loss"])


def test_non_ascii_lines_take_the_general_path() -> None:
    # the Kelvin sign and the long s fold to k and s in a case-insensitive match
    for line in ("ſtep 5 | loss 1.0", "step 5 | \u212aloss 2", "шаг 3 loss 1.5 ▏▎▍ grad_norm 2"):
        assert _same(fastfields.extract(line), fields.extract(line)), line
    # a key spelled with a letter that folds to ASCII is that key (it raised KeyError before)
    assert fastfields.extract("ſtep 5 | loss 1.0") == {"step": 5.0, "loss": 1.0}


def test_the_trie_matches_what_the_alternation_matches() -> None:
    import re

    words = ["loss", "loss scale", "loss step", "lr", "learning rate", "l"]
    trie = re.compile(fastfields.trie_regex(words, "[ _-]"))
    alt = re.compile("|".join("[ _-]".join(map(re.escape, w.split(" "))) for w in sorted(words, key=len, reverse=True)))
    for text in ("loss_scale", "loss-step x", "lossy", "lr", "learning rate", "l", "learning_r", "loss scal"):
        a, b = trie.match(text), alt.match(text)
        assert (a and a.group()) == (b and b.group()), text


_KEYS = [*sorted(fields._LOOKUP), "eval/loss", "val_loss", "train/loss", "eval_grad_norm", "losses/loss", "xloss"]
_SEPS = [" ", ": ", "=", " | ", " is ", "':  ", '": "', "\t", "", "/", "-", " /"]
_VALUES = ["1", "-2.5", "+3e-5", ".5", "7.", "nan", "-NaN", "Inf", "-infinity", "1/20", "tensor(0.3", "tensor([nan",
           "'4.25'", "1e999", "0", "-0.0", "x"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_KEYS), st.sampled_from(_SEPS), st.sampled_from(_VALUES),
                          st.sampled_from([" ", ", ", " | ", "", "_", ",", "} {"])), min_size=1, max_size=6),
       st.booleans())
def test_generated_metric_lines(parts: list[tuple[str, str, str, str]], upper: bool) -> None:
    line = "".join(f"{k}{s}{v}{e}" for k, s, v, e in parts)
    if upper:
        line = line.upper()
    assert _same(fastfields.extract(line), fields.extract(line)), line
