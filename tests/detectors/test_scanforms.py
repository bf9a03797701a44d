"""The scan forms (detectors/scanforms.py): faster patterns for the scan, the same candidates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from detectors.parse import LogParser, default_parser
from detectors.parsers.exceptions import EXCEPTION_RULE
from detectors.scanforms import FORMS
from detectors.scanner import ScanForm, Scanner, available_engines

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
HYPERSCAN = "hyperscan" in available_engines()


def _log_files(real_logs: Path) -> list[Path]:
    files = sorted(CORPUS.glob("*/*/combined.log")) + sorted(real_logs.glob("*/combined.log"))
    assert len(files) > 700
    return files


def _rule_patterns() -> dict[str, str]:
    parser = default_parser()
    return {r.name: r.regex.pattern for r in [*parser.special, EXCEPTION_RULE]}


def _uncovered(files: list[Path], forms: dict[str, ScanForm]) -> tuple[dict[str, int], list[str]]:
    """Per rule with a form, the lines its own pattern matches (counted), and those none of its
    form's patterns matches (listed): Python ``re`` on each line, no scan engine involved."""
    own = _rule_patterns()
    rules = {name: (re.compile(own[name].encode()), [re.compile(p.encode()) for p in (*f.sure, *f.maybe)])
             for name, f in forms.items()}
    matched = dict.fromkeys(forms, 0)
    lost: list[str] = []
    for path in files:
        for line in path.read_bytes().split(b"\n"):
            for name, (rx, parts) in rules.items():
                if rx.search(line) is None:
                    continue
                matched[name] += 1
                if not any(p.search(line) for p in parts):
                    lost.append(f"{name}: {path.parent.name}: {line[:120]!r}")
    return matched, lost


def test_every_form_names_a_parser_rule() -> None:
    assert FORMS.keys() <= _rule_patterns().keys()
    with pytest.raises(ValueError, match="names no parser rule"):
        import detectors.parse as parse

        saved = dict(parse.FORMS)
        parse.FORMS["no.such.rule"] = ScanForm(maybe=("x",))
        try:
            LogParser()
        finally:
            parse.FORMS.clear()
            parse.FORMS.update(saved)


def test_a_form_covers_every_line_its_rule_matches_in_the_real_corpora(real_logs: Path) -> None:
    """Each line a formed rule's own pattern matches is matched by a sure or a maybe pattern of
    its form (else the scan would lose it), and each rule matched enough lines to tell."""
    matched, lost = _uncovered(_log_files(real_logs), FORMS)
    assert lost == []
    assert {name: n >= 5 for name, n in matched.items()} == dict.fromkeys(FORMS, True), matched


def test_the_coverage_check_catches_a_form_that_misses_lines(real_logs: Path) -> None:
    """The check above is not vacuous: a maybe pattern narrower than the rule (only the NCCL
    chains whose return code is 2) leaves real lines uncovered, and the check lists them."""
    broken = {"nccl.chain": ScanForm(sure=(r"NCCL WARN ",), maybe=(r":\d+ -> 2",))}
    _, lost = _uncovered(_log_files(real_logs), broken)
    assert lost and all(entry.startswith("nccl.chain: ") for entry in lost)


@pytest.mark.skipif(not HYPERSCAN, reason="forms are what Hyperscan scans for; other engines run the rules")
def test_forms_change_no_candidate_line_or_id_in_the_real_corpora(real_logs: Path) -> None:
    """The scan with the forms reports the same lines with the same rule ids as the scan of the
    rules' own patterns, on every real log (and so the same events). Blank lines aside: a match
    of ``\\s*$`` may run on over the blank lines after a line, and a blank line parses to nothing."""
    parser = default_parser()
    patterns = parser.scanner.patterns
    assert parser.scanner.forms, "the parser's scanner runs no form"
    plain = Scanner(patterns, engine="hyperscan")
    formed = Scanner(patterns, engine="hyperscan", forms=parser.scanner.forms)
    rules = [re.compile(p.encode()) for p in patterns]
    differ: list[str] = []
    for path in _log_files(real_logs):
        buf = path.read_bytes()
        want = {(s, e): sorted(ids) for s, e, ids in plain.scan(buf) if buf[s:e].strip()}
        got = {(s, e): sorted(ids) for s, e, ids in formed.scan(buf) if buf[s:e].strip()}
        # (Hyperscan given every pattern as it is misses one real header line, which the forms
        # find: detectors/scanforms.py's table.header; an id only the forms found must be its
        # rule's own match in that line)
        extra = {k: [i for i in ids if i not in want.get(k, [])] for k, ids in got.items()}
        if any(want[k] != got.get(k) for k in want) or any(
                not rules[i].search(buf[k[0]:k[1]]) for k, ids in extra.items() for i in ids):
            differ.append(path.parent.name)
    assert differ == []


@pytest.mark.skipif(not HYPERSCAN, reason="forms are what Hyperscan scans for")
def test_a_maybe_line_becomes_a_candidate_only_if_its_rule_matches() -> None:
    patterns = [r"comm 0x[0-9a-f]+ rank \d+ nranks \d+", r"CUDA out of memory"]
    scanner = Scanner(patterns, engine="hyperscan", forms={0: ScanForm(maybe=(r" nranks \d",))})
    buf = (b"h:1:2 [0] NCCL INFO comm 0x5a rank 3 nranks 8 cudaDev 3 - Init COMPLETE\n"
           b"a plain line that says nranks 8 and CUDA out of memory\n"
           b"a line that says only nranks 8\n"
           b"h:1:2 [0] NCCL INFO AllReduce: opCount 1 comm 0x5a [nranks=8] stream 0x1\n")
    got = [(buf[s:e].split(b" ")[0], ids) for s, e, ids in scanner.scan(buf)]
    assert got == [(b"h:1:2", [0]), (b"a", [1])]
