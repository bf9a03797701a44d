"""Bounded resources: hostile logs cannot blow up ``/metrics``, and every cap is counted.

The daemon is built in-process from a real configuration (``Daemon(cfg)``: the same
tailer, engine and collector wiring as ``rankwatch run``) and stepped by hand; the
oracle is the Prometheus exposition it would serve.

- 100,000 distinct "ranks" (``[rankN]: RuntimeError: x``): every family with a rank label
  exports at most ``limits.max_ranks`` values, and the ranks left out are counted once
  each in ``rankwatch_dropped_total{reason="rank_label_cap"}`` (not once per scrape);
- random text in every field of every line format: label values come only from the
  configured job, the catalog, rank numbers and fixed vocabularies — never from log text;
- each configurable cap that is hit is counted under its reason.
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest

from detectors.catalog import load_catalog
from monitor.config import load_config
from monitor.daemon import Daemon
from tests.reliability.proc import metric, series

MAX_RANKS = 1000
N_RANKS = 100_000
_LABELS = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def build(tmp: Path, **limits: int) -> Daemon:
    cfg = load_config(logs=[str(tmp / "logs" / "*.log")], job="bounded", metrics_addr="127.0.0.1:0",
                      state_dir=tmp / "state", limits={"max_ranks": MAX_RANKS, **limits})
    return Daemon(cfg, log=lambda m: None)


def drain(d: Daemon) -> str:
    d.tailer.rescan()
    while d.tailer.poll():
        pass
    d.evaluate()
    return generate_latest(d.registry).decode()


def labels(line: str) -> dict[str, str]:
    return dict(_LABELS.findall(line.split("}", 1)[0])) if "{" in line else {}


def order_of_arrival() -> list[int]:
    order = list(range(N_RANKS))
    random.Random(3).shuffle(order)  # the lowest ranks are not simply the first ones seen
    return order


@pytest.fixture(scope="module")
def many_ranks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, str, str]]:
    tmp = tmp_path_factory.mktemp("ranks")
    (tmp / "logs").mkdir()
    order = order_of_arrival()
    with open(tmp / "logs" / "console.log", "w") as fh:
        for r in order:
            fh.write(f"[rank{r}]: RuntimeError: x\n")
    d = build(tmp)
    first = drain(d)
    second = generate_latest(d.registry).decode()
    yield d, first, second
    d.tailer.close()


@pytest.mark.slow
def test_100k_ranks_cannot_blow_up_metrics(many_ranks: tuple[Daemon, str, str]) -> None:
    d, text, again = many_ranks
    per_family: Counter[str] = Counter()
    values: dict[str, set[str]] = {}
    for line in series(text):
        name = line.split("{")[0].split(" ")[0]
        rank = labels(line).get("rank")
        if rank:
            per_family[name] += 1
            values.setdefault(name, set()).add(rank)
    assert per_family["rankwatch_findings_total"] == MAX_RANKS
    assert all(len(v) <= MAX_RANKS for v in values.values()), {k: len(v) for k, v in values.items()}
    # the engine keeps state for the first max_ranks ranks it sees; the rest is folded into
    # the rank-less bucket (rank="") and counted, once per folded line
    first_seen = {str(r) for r in order_of_arrival()[:MAX_RANKS]}
    assert values["rankwatch_findings_total"] == first_seen
    assert len(series(text)) < 12 * MAX_RANKS
    dropped = metric(text, "rankwatch_dropped_total", reason="max_ranks")
    assert dropped == N_RANKS - MAX_RANKS
    assert metric(again, "rankwatch_dropped_total", reason="max_ranks") == dropped  # scraping changes nothing
    # what the engine found is not lost, only not labelled: every line is a finding
    assert sum(d.engine.state.match_counts.values()) == N_RANKS


@pytest.mark.slow
def test_engine_per_rank_state_is_bounded_by_max_ranks(many_ranks: tuple[Daemon, str, str]) -> None:
    d, _, _ = many_ranks
    st = d.engine.state
    # at most max_ranks ranks of their own, plus the rank-less bucket the rest is folded into
    assert len([k for k in st.ranks if k is not None]) <= MAX_RANKS
    assert st.dropped["max_ranks"] == N_RANKS - MAX_RANKS
    assert len(st.seen_global) <= MAX_RANKS


def _junk(rng: random.Random, n: int) -> str:
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \t\u00e9\u2028\ufffd"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(n + 1)))


TEMPLATES = [
    "[rank{r}]: {j}Error: {j}",
    "[default{r}]:[rank{r}]:[E1218 20:27:21.4 {j}.cpp:629] [Rank {r}] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum={n}, OpType={j}, Timeout(ms)={n}) ran for {n} milliseconds before timing out.",
    "step {n} | {j} {n} | loss {f} | grad_norm {f} | loss_scale {f} | {j}={f}",
    "{{'loss': {f}, '{j}': {f}, 'grad_norm': '{f}', 'epoch': {f}}}",
    "{j}: {j}={f}, step={n}, loss={f}, {j}",
    "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {f} GiB. GPU {r} has a total capacity of {f} GiB",
    "{j}:{n}:{n} [{r}] NCCL WARN {j}",
    "failed (exitcode: -{n}) local_rank: {r} (pid: {n}) of binary: {j}",
    "NVRM: Xid (PCI:0000:{j}): {n}, pid={n}, name={j}",
    "iteration {n}/ {n} | lm loss: {f} | loss scale: {f} | grad norm: {f} | {j}: {f} |",
    "comm 0x{n} rank {r} nRanks {n} cudaDev {r} busId {j} localRank {r}",
    "[{j}] {j}%|{j}| {n}/{n} [00:01<00:09, {f}it/s]\r{j}",
]


@pytest.mark.slow
def test_random_text_in_every_field_never_becomes_a_label(tmp_path: Path) -> None:
    rng = random.Random(11)
    (tmp_path / "logs").mkdir()
    with open(tmp_path / "logs" / "rank_7.log", "w") as fh:
        for _ in range(20_000):
            fh.write(rng.choice(TEMPLATES).format(
                r=rng.choice([rng.randrange(64), rng.randrange(10**9), _junk(rng, 6)]),
                n=rng.choice([rng.randrange(10**6), _junk(rng, 8)]),
                f=rng.choice(["nan", "inf", "-inf", "1e999", str(rng.random() * 10), _junk(rng, 5)]),
                j=_junk(rng, 30),
            ) + "\n")
    d = build(tmp_path, max_ranks=50)
    try:
        text = drain(d)
    finally:
        d.tailer.close()
    failures = {e.id for e in load_catalog()}
    ranks: set[str] = set()
    for line in series(text):
        for k, v in labels(line).items():
            if k in ("rank", "initiator_rank"):
                assert v == "" or v.isdigit(), line
                ranks.add(v)
            elif k == "job":
                assert v == "bounded", line
            elif k == "failure":
                assert v in failures, line
            elif k == "incident":
                assert re.fullmatch(r"[a-z0-9_]+-[0-9a-f]{10}", v), line
            elif k == "metric":
                assert v in {"loss", "grad_norm", "loss_scale"}, line
            elif k in ("hardware", "severity", "reason", "version", "state", "status", "result"):
                assert len(v) < 40 and re.fullmatch(r"[\w.+-]*", v), line
            else:
                raise AssertionError(f"unexpected label {k!r}: {line}")
    assert len(ranks - {""}) <= 50 + 1  # max_ranks, plus an incident's initiator
    assert len(series(text)) < 2000


def test_caps_are_configurable_and_counted(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for r in range(5):
        (logs / f"rank{r}.log").write_text(f"[rank{r}]: RuntimeError: x\n")
    (logs / "rank0.log").write_bytes(b"x" * 5000 + b"\nstep 1 | loss 1.0 | grad_norm 1.0\n")
    d = build(tmp_path, max_files=3, max_line_bytes=1024, max_ranks=1)
    try:
        text = drain(d)
    finally:
        d.tailer.close()
    assert metric(text, "rankwatch_dropped_total", reason="max_files") >= 2  # counted at each rescan that hits it
    assert metric(text, "rankwatch_dropped_total", reason="line_too_long") == 1
    # ranks 1 and 2 (of 0, 1, 2) are folded into the rank-less bucket by the engine
    assert metric(text, "rankwatch_dropped_total", reason="max_ranks") == 2
    assert metric(text, "rankwatch_files_tailed") == 3
