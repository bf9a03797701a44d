"""What the Hyperscan scan looks for in place of a few parser triggers (``scanner.ScanForm``).

A trigger whose pattern starts on a word that noisy logs repeat on most lines (``NCCL INFO``
on every NCCL debug line, ``comm 0x`` on every collective, ``rank``, ``time``) makes Hyperscan
try the pattern's tail at each of them. Its form names instead what the trigger's matches all
contain and noise lacks: ``sure`` patterns are alternatives of the trigger (a match is a
match), ``maybe`` patterns a rarer part every match contains; a line only a ``maybe`` pattern
found is checked with the trigger's own pattern before it becomes a candidate. So a form
changes the scan's speed, never the candidate lines or their rule ids: each ``maybe``
pattern must be a piece of every match of the alternatives it stands for
(``tests/detectors/test_scanforms.py`` checks it on every real log, and that the ids are
the same with and without the forms). Measured: ``bench/README.md``, round 6.

Keyed by rule name; a name that is no rule is an error (``LogParser``).
"""

from __future__ import annotations

from detectors.scanner import ScanForm

__all__ = ["FORMS"]

FORMS: dict[str, ScanForm] = {
    # a metric table's header cell: the trigger itself, and its "| loss |" cell alone. Hyperscan 0.7
    # (a database of this parser's ~380 patterns) missed the trigger on a header whose first cell is
    # padded with 14+ spaces ("component              | loss | generation_loss", corpus holdout19
    # h19a-033); the narrower alternative beside it is found (tests/detectors/test_scanner.py checks
    # every real log)
    "table.header": ScanForm(sure=(
        r"(?:│|┃|\|) *(?i:step|steps|iter|iteration|epoch|rank|loss|(?:train|mean|avg)[_ ]loss|grad[_ ]?norm|gnorm|lr) *(?:│|┃|\|)",
        r"\| *(?i:loss) *\|",
        r"^ *(?i:step|steps|iter|iteration|epoch) +(?:│|┃|\|) +[A-Za-z]",
    )),
    # NCCL (?:WARN |INFO [\w./-]+:\d+ -> \d): the INFO alternative ends in ":<line> -> <code>"
    "nccl.chain": ScanForm(sure=(r"NCCL WARN ",), maybe=(r":\d+ -> \d",)),
    # comm 0x[0-9a-fA-F]+ rank \d+ n[Rr]anks \d+: every collective line has "comm 0x", none " nranks <n>"
    "nccl.rankmap": ScanForm(maybe=(r" n[Rr]anks \d",)),
    # torchrun's failure summary: "rank: 3 (local_rank: 3)" and the separator lines ("=====", "[0]:")
    "launcher.summary": ScanForm(
        sure=(r"Root Cause \(first observed failure\)", r"Failures:\s*$", r"exitcode\s*: -?\d+ \(pid: \d+\)",
              r"time\s*: \d{4}-\d\d-\d\d_\d\d:"),
        maybe=(r"\(local_rank: \d", r"={20}", r"-{20}", r"\]:\s*$"),
    ),
}
