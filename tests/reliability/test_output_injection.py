"""Hostile text in logs, file names and arguments (issue #14, defects 7, 8, 9, 13, 14):
every output medium shows it as itself. Real CLI subprocesses; Markdown is checked by
rendering it with markdown-it (the CommonMark parser rich itself uses)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from monitor.report import render_markdown
from monitor.report.escape import code_span, fence, html, markdown, terminal
from tests.conftest import REPO
from tests.helpers import free_port

OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
MD_ATTACK = "[click](javascript:alert(1)) ![img](http://evil.example/p.png) <img src=x onerror=alert(1)> **bold** # h"


def rw(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "monitor", *args], cwd=REPO, capture_output=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


def _hostile_logs(root: Path) -> Path:
    logs = root / "logs"
    logs.mkdir()
    (logs / "rank_0.log").write_text(
        "step 1 | loss 2.0\n"
        f"[rank0]: torch.OutOfMemoryError: CUDA out of memory. {OSC_TITLE}{CLEAR} {MD_ATTACK} ``` \n"
    )
    return logs


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_attack_terminal_escapes_in_log_lines_never_reach_any_output(tmp_path: Path, fmt: str) -> None:
    logs = _hostile_logs(tmp_path)
    wide = {"COLUMNS": "400"}  # the text report is a rich panel: keep each evidence line whole
    stdout = rw("diagnose", str(logs), "-f", fmt, env=wide).stdout
    out_file = tmp_path / f"report.{fmt}"
    assert rw("diagnose", str(logs), "-f", fmt, "-o", str(out_file), env=wide).returncode == 0
    for out in (stdout, out_file.read_bytes()):
        assert b"OutOfMemoryError" in out
        assert b"\x1b" not in out and b"\x07" not in out
        if fmt != "json":  # JSON keeps the text, escaped by JSON itself (\u001b)
            assert b"\\x1b]0;pwned\\x07" in out


def test_attack_markdown_in_log_lines_renders_as_text(tmp_path: Path) -> None:
    logs = _hostile_logs(tmp_path)
    md = rw("diagnose", str(logs), "-f", "markdown").stdout.decode()
    tokens = MarkdownIt("commonmark").parse(md)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"link_open", "image", "html_inline", "html_block"}, kinds
    rendered = MarkdownIt("commonmark").render(md)
    assert "<img" not in rendered and "<a " not in rendered
    # the fix is a fenced block, and the evidence fence is not closed by the ``` in the line
    fences = [t for t in tokens if t.type == "fence"]
    assert any("OutOfMemoryError" in t.content and MD_ATTACK in t.content for t in fences)
    inc = json.loads(rw("diagnose", str(logs), "-f", "json").stdout)["incidents"][0]
    contents = [t.content.rstrip("\n") for t in fences]
    assert inc["fix"].rstrip("\n") in contents and inc["verify"].rstrip("\n") in contents


def test_attack_newline_in_a_file_name_cannot_spoof_an_evidence_line(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank_0.log\nrank_7.log:1: [rank7]: fake evidence").write_text(
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n")
    for fmt in ("text", "markdown"):
        out = rw("diagnose", str(logs), "-f", fmt, env={"COLUMNS": "400"}).stdout.decode()
        spoof = [line for line in out.splitlines() if line.lstrip().startswith("rank_7.log:1:")]
        assert not spoof, out
        assert "rank_0.log\\nrank_7.log" in out


@pytest.mark.parametrize("args", [["diagnose", "run[/1]"], ["catalog", "show", "[/x]"], ["diagnose", "[bold]x[/bold]"]])
def test_attack_brackets_in_arguments_are_not_rich_markup(args: list[str]) -> None:
    r = rw(*args)
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err and "MarkupError" not in err
    assert args[-1] in err


def _run_until_started(tmp_path: Path, job: str, *extra: str, env: dict[str, str] | None = None) -> str:
    """Start `rankwatch run`, wait for its startup line, stop it gracefully; its stderr."""
    logs = tmp_path / ("very-long-directory-name-" * 6) / "logs"
    logs.mkdir(parents=True)
    (logs / "rank_0.log").write_text("step 1 | loss 2.0\n")
    err = tmp_path / "stderr.txt"
    with open(err, "wb") as fh:
        p = subprocess.Popen([sys.executable, "-m", "monitor", "run", "--logs", str(logs / "*.log"), "--job", job,
                              "--metrics-addr", f"127.0.0.1:{free_port()}", "--state-dir", str(tmp_path / "state"),
                              *extra], cwd=REPO, stdout=subprocess.DEVNULL, stderr=fh,
                             env=dict(os.environ, COLUMNS="60", **(env or {})))
        try:
            while b"metrics on" not in err.read_bytes():
                assert p.poll() is None, err.read_text()
                time.sleep(0.05)
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=60)
    return err.read_text()


def test_attack_job_name_with_brackets_prints_as_itself_and_log_lines_are_never_wrapped(tmp_path: Path) -> None:
    out = _run_until_started(tmp_path, "sweep[/lr]")
    assert "MarkupError" not in out and "Traceback" not in out
    start = [line for line in out.splitlines() if "metrics on" in line]
    assert len(start) == 1, out  # one record, one line, even with COLUMNS=60 and a long path
    assert "job 'sweep[/lr]'" in start[0] and str(tmp_path / ("very-long-directory-name-" * 6)) in start[0]
    assert any("stopped" in line for line in out.splitlines())


def test_log_format_json_is_one_object_per_line(tmp_path: Path) -> None:
    out = _run_until_started(tmp_path, "sweep[lr]", "--log-format", "json")
    docs = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert docs and all(set(d) == {"time", "level", "logger", "message"} for d in docs)
    assert any("job 'sweep[lr]'" in d["message"] for d in docs)


@pytest.mark.parametrize("text", [OSC_TITLE + CLEAR, "a\nb\rc", "\u202eevil", "x\x00y\x9bz"])
def test_one_escaping_function_per_medium(text: str) -> None:
    for out in (terminal(text), markdown(text), html(text), code_span(text), "\n".join(fence([text]))):
        assert not any((ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c == "\u202e" for c in out), repr(out)
    assert terminal("a\nb") == "a\\nb" and terminal("a\nb", multiline=True) == "a\nb"
    assert html("<b a='1'>&") == "&lt;b a=&#x27;1&#x27;&gt;&amp;"


def test_markdown_report_escapes_the_job_name() -> None:
    report = {"job": "x`` <b>", "context": {}, "ranks": [], "incidents": [], "notes": ["[n](javascript:x)"]}
    md = render_markdown(report)
    rendered = MarkdownIt("commonmark").render(md)
    assert "<b>" not in rendered and "<a " not in rendered


def test_attack_overlong_line_tail_is_noted_in_the_report(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank_0.log").write_bytes(b"[rank0]: RuntimeError: x" + b"A" * (2 << 20) + b" hidden tail\nstep 1 | loss 1.0\n")
    notes = json.loads(rw("diagnose", str(logs), "-f", "json").stdout)["notes"]
    assert any("rank_0.log: 1 line(s) longer than" in n and "were cut" in n for n in notes), notes
