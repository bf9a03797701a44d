"""``rankwatch diagnose --format html``: one self-contained file, checked as text and in headless Chromium.

The Chromium check renders the page to a PNG and decodes it (zlib + PNG filters, no image
library) to make sure it is not blank. With ``RANKWATCH_UPDATE_SCREENSHOT=1`` the screenshot
of the recorded 4-rank fp16 overflow (tests/e2e/golden/fp16_overflow-logdir) is written to
docs/images/report.png for the README.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from detectors.diagnosis import build_report
from detectors.timeline import build_timeline
from monitor.report.html import render_html
from tests.conftest import REPO
from tests.detectors.test_symptoms import SEED, job

EXTERNAL = re.compile(r"""(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


def nan_job_files() -> dict[str, str]:
    """4 ranks, fp16 with a GradScaler; rank 2's local loss goes NaN first at step 30."""
    files = {}
    for r in range(4):
        lines = [f"config: precision=fp16 loss_scaling=true world_size=4 backend=nccl rank={r}"]
        for s in range(1, 41):
            scale = 65536.0 if s < 25 else 32768.0
            bad = (r == 2 and s >= 30) or s >= 31
            loss = "nan" if bad else f"{2.0 - s * 0.02 + (r % 2) * 0.01:.4f}"
            lines.append(f"step {s} | loss {loss} | grad_norm {'nan' if bad else '1.1'} | loss_scale {scale:g}")
        files[f"node0/rank_{r}.log"] = "\n".join(lines) + "\n"
    return files


def html_of(files: dict[str, str]) -> tuple[str, dict]:
    st = job(files)
    report = build_report(st, files=len(files))
    return render_html(report, build_timeline(st, report["incidents"])), report


def test_timeline_marks_initiator_and_collateral() -> None:
    st = job(nan_job_files())
    report = build_report(st, files=4)
    tl = build_timeline(st, report["incidents"])
    assert tl.axis == "step" and tl.rows == [0, 1, 2, 3, None]  # None: the job row (loss-scale warm-up: no rank)
    ini = [m for m in tl.marks if m.kind == "initiator"]
    assert [(m.rank, m.x, m.failure) for m in ini] == [(2, 30.0, "amp_bf16_vs_fp16"), (None, 25.0, "loss_scale_warmup")]
    coll = {(m.rank, m.x) for m in tl.marks if m.kind == "collateral"}
    assert coll == {(0, 31.0), (1, 31.0), (3, 31.0)}
    assert [p.x for p in tl.series[2]][:3] == [1.0, 2.0, 3.0] and tl.series[2][0].loss_scale == 65536.0
    assert tl.has_loss and (tl.x_min, tl.x_max) == (1.0, 40.0)


def test_timeline_uses_time_without_steps() -> None:
    # c10d watchdog lines with torch >= 2.4 timestamps (log-formats.md §0.2), no step counters
    line = ("[rank{r}]:[E1218 20:27:{s:02d}.426415540 ProcessGroupNCCL.cpp:629] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
            "600081 milliseconds before timing out.\n")
    oom = ("[rank3]:[E1218 20:17:05.000000000 ProcessGroupNCCL.cpp:1] [Rank 3] Process group watchdog thread terminated "
           "with exception: CUDA error: out of memory\n")
    st = job({"rank_0.log": line.format(r=0, s=21), "rank_1.log": line.format(r=1, s=23), "rank_3.log": oom})
    report = build_report(st, files=3)
    tl = build_timeline(st, report["incidents"])
    assert tl.axis == "time"
    ini = next(m for m in tl.marks if m.kind == "initiator")
    assert ini.rank == 3 and ini.x is not None and ini.x < min(m.x or 0 for m in tl.marks if m.kind == "collateral")


def test_html_is_self_contained_and_complete() -> None:
    html, report = html_of(nan_job_files())
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert not EXTERNAL.search(html), EXTERNAL.search(html)
    assert "<script" not in html and "<link" not in html and "@import" not in html and "url(" not in html
    inc = report["incidents"][0]
    assert inc["failure"] == "amp_bf16_vs_fp16" and inc["initiator"]["rank"] == 2
    assert html.count("<svg") == 1 + 4  # the timeline + one chart per rank
    assert f"<code>{inc['id']}</code>" in html and "Initiated by rank 2 at step 30" in html
    assert "rank 0 (nonfinite_loss, step 31)" in html  # collateral, greyed
    assert 'fill="#c62828" stroke="#fff"' in html  # the initiator mark
    assert "&lt;" not in inc["title"] and "step 30 | loss nan" in html


def test_html_escapes_log_text(tmp_path: Path) -> None:
    html, _ = html_of({"rank_0.log": "[rank0]: ValueError: bad sample <script>alert(1)</script> & 'quotes'\n"})
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#x27;quotes&#x27;" in html


def test_healthy_job_page() -> None:
    html, report = html_of({"rank_0.log": "".join(f"step {i} | loss {2.0 - i * 0.01:.3f} | grad_norm 1.0\n" for i in range(1, 60))})
    assert report["incidents"] == [] and "No incident found." in html and "Loss and loss scale per rank" in html


def test_cli_writes_html_for_the_recorded_runs(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    r = subprocess.run([sys.executable, "-m", "monitor", "diagnose", str(SEED / "bf16"), "--baseline", str(SEED / "fp32"),
                        "--format", "html", "--output", str(out)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert "bf16_accuracy_gap" in html and "amp_no_speedup" in html and not EXTERNAL.search(html)


# ----------------------------------------------------------------------------- headless Chromium
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if (exe := shutil.which(name)) is not None:
            return exe
    return None


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of raw pixel bytes) of an 8-bit RGB/RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    height = depth = ctype = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    assert depth == 8 and ctype in (2, 6), (depth, ctype)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                cur[i] = (cur[i] + a) & 0xFF
            elif f == 2:
                cur[i] = (cur[i] + b) & 0xFF
            elif f == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(cur) if bpp == 3 else bytes(v for k, v in enumerate(cur) if k % 4 != 3))
        prev = cur
    return width, height, rows


def screenshot(html: Path, png: Path, profile: Path) -> None:
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium); the HTML checks above still ran")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={png}",
           "--window-size=1280,2000", html.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert png.is_file() and png.stat().st_size > 0, f"chromium wrote no screenshot ({proc.returncode}): {proc.stderr[-2000:]}"


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    r = subprocess.run([sys.executable, "-m", "monitor", "diagnose", str(SEED / "fp16"), "--baseline", str(SEED / "fp32"),
                        "--job", "fp16-vs-fp32", "--format", "html", "--output", str(page)], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    png = tmp_path / "report.png"
    screenshot(page, png, tmp_path / "profile")
    width, height, rows = decode_png(png.read_bytes())
    assert (width, height) == (1280, 2000)
    colours = {row[i:i + 3] for row in rows[::4] for i in range(0, len(row), 12)}
    assert len(colours) > 200, f"only {len(colours)} colours: the page looks blank"
    header = rows[20][:30]  # the dark header band at the top left
    assert all(v < 80 for v in header), "the header did not render"


GOLDEN_FOR_README = REPO / "tests" / "e2e" / "golden" / "fp16_overflow-logdir" / "logs"


@pytest.mark.skipif(os.environ.get("RANKWATCH_UPDATE_SCREENSHOT") != "1",
                    reason="set RANKWATCH_UPDATE_SCREENSHOT=1 to rewrite docs/images/report.png")
def test_update_readme_screenshot(tmp_path: Path) -> None:
    """docs/images/report.png: the recorded 4-rank fp16 overflow (rank 1 starts it, ranks 0/2/3 collateral)."""
    if not GOLDEN_FOR_README.is_dir():
        pytest.skip(f"{GOLDEN_FOR_README} is not recorded")
    page = tmp_path / "report.html"
    r = subprocess.run([sys.executable, "-m", "monitor", "diagnose", str(GOLDEN_FOR_README), "--job", "fp16-overflow",
                        "--format", "html", "--output", str(page)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    png = tmp_path / "report.png"
    screenshot(page, png, tmp_path / "profile")
    (REPO / "docs" / "images").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(png, REPO / "docs" / "images" / "report.png")
