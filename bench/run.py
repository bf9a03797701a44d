"""Benchmark of ``rankwatch diagnose`` side by side with mtail and grep.

For every requested corpus size, on the same files and in the same run, it times

* ``rankwatch diagnose DIR --format json`` (end to end, a fresh process; its files parsed
  in one worker process per CPU), and the same with ``--jobs 1`` (``rankwatch-1``),
* ``mtail --one_shot`` with ``bench/mtail/rankwatch.mtail`` (36 fingerprints plus
  numeric extraction),
* ``LC_ALL=C grep -c -E -f bench/patterns.txt FILES`` (the same 36 patterns),

and reports the median of interleaved runs (tool A, B, C, D, then again): wall seconds,
MB/s, lines/s, CPU seconds and the peak RSS of each child process, the ratios between the tools, how each tool's
throughput and memory change from the smallest to the largest size, and (for the
smallest size) whether mtail's per-pattern counts agree with grep's.

Nothing here asserts a timing: the figures are printed, and written to
``bench/results/latest.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import pstats
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.generate import generate, load_manifest, manifest_path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PATTERNS = BENCH / "patterns.txt"
MTAIL_DIR = BENCH / "mtail"
MTAIL_PROG = MTAIL_DIR / "rankwatch.mtail"
TOOLS = ("rankwatch", "rankwatch-1", "mtail", "grep")
RANKWATCH_TOOLS = ("rankwatch", "rankwatch-1")
MB = 1_000_000
_GNU_TIME: str | None = None  # set in main()


# ---------------------------------------------------------------------------
# running one child and measuring it


@dataclass
class Run:
    tool: str
    argv: list[str]
    wall_s: float = 0.0
    user_s: float = 0.0
    sys_s: float = 0.0
    maxrss_kb: int = 0
    rc: int | None = None
    timed_out: bool = False
    stdout_path: str = ""
    stderr_tail: str = ""
    error: str = ""
    rss_source: str = ""

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


GNU_TIME = "/usr/bin/time"


def _gnu_time() -> str | None:
    """GNU time, if installed: it forks the measured command from a ~2 MB process."""
    if not os.access(GNU_TIME, os.X_OK):
        return None
    try:
        p = subprocess.run([GNU_TIME, "-f", "%M", "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return GNU_TIME if p.stderr.strip().isdigit() else None


def measure(
    tool: str,
    argv: list[str],
    out_dir: Path,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    tag: str = "",
) -> Run:
    """Run ``argv`` once: wall time around spawn..reap; CPU from ``wait4``; peak RSS from GNU time.

    The peak RSS is not taken from ``wait4``/``RUSAGE_CHILDREN`` alone: Linux carries
    the RSS a child had at ``fork`` (a copy of this Python process, ~20-40 MB) into
    its ``ru_maxrss`` across ``exec``, which would hide the footprint of small tools
    such as grep.  GNU time forks the command from a tiny process and reports the
    command's own ``ru_maxrss`` (%M); without GNU time the wait4 figure is used and
    flagged (``rss_source``).
    """
    run = Run(tool=tool, argv=argv)
    out_dir.mkdir(parents=True, exist_ok=True)
    stdout_path = out_dir / f"{tool}{tag}.stdout"
    stderr_path = out_dir / f"{tool}{tag}.stderr"
    rss_path = out_dir / f"{tool}{tag}.maxrss"
    run.stdout_path = str(stdout_path)
    gt = _GNU_TIME
    full = [gt, "-f", "%M", "-o", str(rss_path), *argv] if gt else argv
    run.rss_source = "GNU time %M" if gt else "wait4 ru_maxrss (includes the fork-time RSS of the parent)"
    with open(stdout_path, "wb") as so, open(stderr_path, "wb") as se:
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(
                full,
                stdout=so,
                stderr=se,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
                cwd=ROOT,
            )
        except OSError as e:
            run.error = f"cannot start: {e}"
            return run
        timer = None
        if timeout:

            def _kill() -> None:
                run.timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)

            timer = threading.Timer(timeout, _kill)
            timer.start()
        _, status, ru = os.wait4(proc.pid, 0)
        run.wall_s = time.perf_counter() - t0
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    run.rc = proc.returncode
    run.user_s, run.sys_s, run.maxrss_kb = ru.ru_utime, ru.ru_stime, ru.ru_maxrss
    if gt:
        try:
            lines = rss_path.read_text().split()
            run.maxrss_kb = int(lines[-1])
        except (OSError, ValueError, IndexError):
            run.rss_source = "wait4 ru_maxrss (GNU time gave no figure)"
        # GNU time exits with the command's status, or 128+signal when it was killed
    with contextlib.suppress(OSError):
        run.stderr_tail = stderr_path.read_text(errors="replace")[-2000:]
    return run


def warm_cache(files: list[Path]) -> None:
    """Read every file once so that no tool pays for the first read from disk."""
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 22):
                pass


# ---------------------------------------------------------------------------
# the three tools


def rankwatch_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "rankwatch"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "monitor"]


def rankwatch_available() -> tuple[bool, str]:
    try:
        p = subprocess.run(
            [*rankwatch_cmd(), "diagnose", "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    if p.returncode != 0:
        last = (p.stderr or p.stdout).strip().splitlines()[-1:]
        return False, last[0] if last else f"rc={p.returncode}"
    return True, ""


def mtail_bin() -> str | None:
    return shutil.which("mtail")


def tool_version(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (p.stdout or p.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unavailable"


def _python_env() -> dict[str, str]:
    """The environment without PYTHONDONTWRITEBYTECODE: an installed rankwatch has its .pyc files
    (pip writes them); without them every run compiles its modules again (~0.2 s of start-up)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def argv_for(tool: str, corpus: Path, files: list[Path]) -> tuple[list[str], dict[str, str] | None]:
    if tool == "rankwatch":
        return [*rankwatch_cmd(), "diagnose", str(corpus), "--format", "json"], _python_env()
    if tool == "rankwatch-1":
        return [*rankwatch_cmd(), "diagnose", str(corpus), "--format", "json", "--jobs", "1"], _python_env()
    if tool == "mtail":
        return [
            mtail_bin() or "mtail",
            "--one_shot",
            "--one_shot_format",
            "json",
            "--progs",
            str(MTAIL_DIR),
            "--logs",
            str(corpus / "rank*.log"),
            "--logtostderr",
            # one-shot mode still binds its HTTP port (3903 by default): an ephemeral one, so
            # that two benchmarks, or a real mtail on this machine, do not make it fail
            "--address",
            "127.0.0.1",
            "--port",
            "0",
        ], None
    if tool == "grep":
        env = dict(os.environ, LC_ALL="C")
        return ["grep", "-c", "-E", "-f", str(PATTERNS), *map(str, files)], env
    raise ValueError(tool)


# ---------------------------------------------------------------------------
# reading the tools' answers (what each found), for the "found" column


def summarize_rankwatch(path: Path, expected: dict) -> dict:
    try:
        d = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        return {"ok": False, "note": f"no JSON report ({type(e).__name__})"}
    inc = d.get("incidents") or []
    s: dict = {"ok": True, "incidents": len(inc)}
    if inc:
        top = inc[0]
        s["top_failure"] = top.get("failure")
        s["top_initiator_rank"] = (top.get("initiator") or {}).get("rank")
        s["top_severity"] = top.get("severity")
        s["failures"] = [i.get("failure") for i in inc]
    s["matches_expected"] = s.get("top_failure") == expected.get("failure") and s.get(
        "top_initiator_rank"
    ) == expected.get("initiator_rank")
    return s


def _mtail_values(d: dict, name: str) -> list[tuple[list[str], float]]:
    out = []
    for m in d.get(name, []) or []:
        for lv in m.get("LabelValues") or []:
            out.append((lv.get("Labels") or [], lv.get("Value", {}).get("Value")))
        if "Value" in m and not m.get("LabelValues"):
            out.append(([], m["Value"].get("Value")))
    return out


def summarize_mtail(path: Path) -> dict:
    try:
        d = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        return {"ok": False, "note": f"no JSON output ({type(e).__name__})"}
    per_pattern: dict[str, int] = {}
    per_file_pattern: dict[str, dict[str, int]] = {}
    for labels, v in _mtail_values(d, "rankwatch_fingerprint_lines_total"):
        f, p = Path(labels[0]).name, labels[1]
        per_pattern[p] = per_pattern.get(p, 0) + int(v)
        per_file_pattern.setdefault(f, {})[p] = int(v)
    lines = sum(int(v) for _, v in _mtail_values(d, "rankwatch_lines_total"))
    gauges = {}
    for g in (
        "rankwatch_step",
        "rankwatch_loss",
        "rankwatch_grad_norm",
        "rankwatch_loss_scale",
        "rankwatch_skipped_steps",
    ):
        gauges[g] = {Path(lab[0]).name: v for lab, v in _mtail_values(d, g)}
    return {
        "ok": True,
        "lines": lines,
        "fingerprint_lines": sum(per_pattern.values()),
        "per_pattern": per_pattern,
        "per_file_pattern": per_file_pattern,
        "gauges": gauges,
    }


def summarize_grep(path: Path) -> dict:
    counts = {}
    try:
        for line in Path(path).read_text().splitlines():
            f, _, n = line.rpartition(":")
            counts[Path(f).name] = int(n)
    except (OSError, ValueError) as e:
        return {"ok": False, "note": str(e)}
    return {"ok": True, "matching_lines": sum(counts.values()), "per_file": counts}


# ---------------------------------------------------------------------------
# mtail <-> grep equivalence


def mtail_fingerprints() -> list[tuple[str, str]]:
    """(name, regex) of the fingerprint blocks of the mtail program, in order."""
    out = []
    lines = MTAIL_PROG.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"# fingerprint (\d+) (\w+)$", line)
        if m:
            rx = lines[i + 1]
            if not (rx.startswith("/") and rx.endswith("/ {")):
                raise ValueError(f"{MTAIL_PROG}:{i + 2}: expected '/REGEX/ {{'")
            out.append((m.group(2), rx[1:-3]))
    return out


def check_equivalence(files: list[Path], mtail_summary: dict | None) -> dict:
    fps = mtail_fingerprints()
    pats = PATTERNS.read_text().split("\n")
    if pats and pats[-1] == "":
        pats.pop()
    res: dict = {
        "mtail_patterns": len(fps),
        "grep_patterns": len(pats),
        "same_regexes": [rx for _, rx in fps] == pats,
        "count_mismatches": [],
    }
    if not mtail_summary or not mtail_summary.get("ok"):
        res["note"] = "mtail output unavailable; only the regex lists were compared"
        return res
    env = dict(os.environ, LC_ALL="C")
    per_file = mtail_summary["per_file_pattern"]
    for name, rx in fps:
        p = subprocess.run(
            ["grep", "-c", "-E", "-e", rx, *map(str, files)], capture_output=True, text=True, env=env
        )
        for line in p.stdout.splitlines():
            f, _, n = line.rpartition(":")
            g = int(n)
            m = per_file.get(Path(f).name, {}).get(name, 0)
            if g != m:
                res["count_mismatches"].append({"pattern": name, "file": Path(f).name, "grep": g, "mtail": m})
    res["per_pattern_totals"] = mtail_summary["per_pattern"]
    return res


# ---------------------------------------------------------------------------
# profiling


PROFILE_SNIPPET = r"""
import cProfile, sys
from importlib.metadata import entry_points
argv, out = sys.argv[2:], sys.argv[1]
eps = [e for e in entry_points(group="console_scripts") if e.name == "rankwatch"]
if eps:
    target = eps[0].load()
else:
    import runpy
    def target():
        runpy.run_module("monitor", run_name="__main__", alter_sys=True)
sys.argv = ["rankwatch", *argv]
prof = cProfile.Profile()
try:
    prof.runcall(target)
except SystemExit:
    pass
finally:
    prof.dump_stats(out)
"""


def profile_rankwatch(corpus: Path, out_dir: Path, top: int = 25) -> str:
    prof = out_dir / "rankwatch.prof"
    argv = [sys.executable, "-c", PROFILE_SNIPPET, str(prof), "diagnose", str(corpus), "--format", "json"]
    r = measure("rankwatch-profile", argv, out_dir)
    if not prof.exists():
        return f"profiling failed (rc={r.rc}): {r.stderr_tail[-500:]}"
    import io

    buf = io.StringIO()
    st = pstats.Stats(str(prof), stream=buf)
    st.strip_dirs().sort_stats("cumulative").print_stats(top)
    return (
        f"cProfile of rankwatch diagnose on {corpus} (wall {r.wall_s:.2f} s under the profiler, "
        f"main process only):\n" + buf.getvalue()
    )


# ---------------------------------------------------------------------------
# reporting


@dataclass
class ToolResult:
    tool: str
    status: str = "ok"
    runs: list[dict] = field(default_factory=list)
    best: dict = field(default_factory=dict)
    found: dict = field(default_factory=dict)


def _fmt_int(n: float) -> str:
    return f"{n:,.0f}"


def _mbs(nbytes: int, s: float) -> float:
    return nbytes / MB / s if s > 0 else float("nan")


def table_for_size(entry: dict) -> str:
    c = entry["corpus"]
    out = [
        f"corpus {c['size_mb']:g} MB, mix {c.get('mix', 'nccl')} (seed {c['seed']}): {c['files']} files, {c['bytes'] / MB:.1f} MB, "
        f"{_fmt_int(c['lines'])} lines (+{_fmt_int(c['cr_segments'])} \\r-separated tqdm segments), "
        f"{c['steps']} steps; planted: {c['expected']['failure']} on rank {c['expected']['initiator_rank']}",
        "",
        f"  {'tool':<11}{'runs':>5}{'wall s':>9}{'MB/s':>9}{'lines/s':>12}{'cpu s':>8}{'cpu MB/s':>10}"
        f"{'peak RSS':>11}  found",
        f"  {'-' * 11}{'-' * 5}{'-' * 9}{'-' * 9}{'-' * 12}{'-' * 8}{'-' * 10}{'-' * 11}  {'-' * 40}",
    ]
    for tool in TOOLS:
        t = entry["tools"].get(tool)
        if not t:
            continue
        if t["status"] != "ok":
            out.append(
                f"  {tool:<11}{'—':>5}{'—':>9}{'—':>9}{'—':>12}{'—':>8}{'—':>10}{'—':>11}  {t['status']}"
            )
            continue
        b = t["best"]
        out.append(
            f"  {tool:<11}{b['runs']:>5}{b['wall_s']:>9.3f}{b['mb_s']:>9.1f}{_fmt_int(b['lines_s']):>12}"
            f"{b['cpu_s']:>8.2f}{b['cpu_mb_s']:>10.1f}{b['maxrss_mb']:>8.1f} MB  {found_text(tool, t['found'])}"
        )
    if entry.get("line_mix"):
        out.insert(1, "  line mix: " + ", ".join(f"{k} {100 * v:.1f} %" for k, v in entry["line_mix"].items()))
    if entry.get("same_json") is not None:
        out.append("")
        out.append(f"  rankwatch parallel vs --jobs 1: same JSON report: {'yes' if entry['same_json'] else 'NO'}")
    sp = entry.get("speed", {})
    if sp:
        out.append("  " + "; ".join(
            f"{t}: " + ", ".join(f"{v:.2f}x {o}" for o, v in d.items()) for t, d in sp.items()
        ) + f"  (MB/s ratios; load average {entry['loadavg_1m']['before']:.1f} -> {entry['loadavg_1m']['after']:.1f})")
    r = entry.get("ratios", {})
    if r:
        out.append("")
        for key, label in (("rankwatch/mtail", "mtail"), ("rankwatch/grep", "grep")):
            if key in r:
                x = r[key]
                speed = x["wall"]
                how = f"rankwatch {1 / speed:.1f}x faster" if speed < 1 else f"rankwatch {speed:.1f}x slower"
                out.append(
                    f"  {key:<16} wall {x['wall']:.3f}   cpu {x.get('cpu', float('nan')):.3f}   MB/s {x['mb_s']:.3f}"
                    f"   peak RSS {x['rss']:.2f}   ({how} than {label} by wall time)"
                )
    return "\n".join(out)


def found_text(tool: str, f: dict) -> str:
    if not f.get("ok", True):
        return f.get("note", "?")
    if tool in RANKWATCH_TOOLS:
        if not f.get("incidents"):
            return "0 incidents"
        mark = "as planted" if f.get("matches_expected") else "NOT the planted one"
        return (
            f"{f['incidents']} incident(s); top {f.get('top_failure')} rank {f.get('top_initiator_rank')} "
            f"({mark})"
        )
    if tool == "mtail":
        return f"{f['fingerprint_lines']} fingerprint hits, {_fmt_int(f['lines'])} lines read"
    if tool == "grep":
        return f"{f['matching_lines']} matching lines"
    return ""


def growth_text(entries: list[dict]) -> tuple[str, dict]:
    """How each tool's throughput and memory change from the smallest to the largest corpus."""
    if len(entries) < 2:
        return "", {}
    a, z = entries[0], entries[-1]
    scale = z["corpus"]["bytes"] / a["corpus"]["bytes"]
    lines = [
        f"growth from {a['corpus']['size_mb']:g} MB to {z['corpus']['size_mb']:g} MB (x{scale:.1f} data). "
        "Linear time: the MB/s ratios ~ 1 (cpu MB/s net of start-up is the steadiest); "
        "flat memory: RSS ratio ~ 1.",
        "",
        f"  {'tool':<11}{'wall x':>8}{'MB/s small -> large':>22}{'ratio':>7}"
        f"{'cpu MB/s, net of start-up':>28}{'ratio':>7}{'peak RSS small -> large':>26}{'ratio':>7}",
    ]
    data = {}
    for tool in TOOLS:
        ta, tz = a["tools"].get(tool), z["tools"].get(tool)
        if not ta or not tz or ta["status"] != "ok" or tz["status"] != "ok":
            continue
        ba, bz = ta["best"], tz["best"]
        g = {
            "data_ratio": scale,
            "wall_ratio": bz["wall_s"] / ba["wall_s"],
            "mb_s_small": ba["mb_s"],
            "mb_s_large": bz["mb_s"],
            "mb_s_ratio": bz["mb_s"] / ba["mb_s"],
            "cpu_mb_s_ratio": bz["cpu_mb_s"] / ba["cpu_mb_s"] if ba.get("cpu_mb_s") else float("nan"),
            "rss_small_mb": ba["maxrss_mb"],
            "rss_large_mb": bz["maxrss_mb"],
            "rss_ratio": bz["maxrss_mb"] / ba["maxrss_mb"] if ba["maxrss_mb"] else float("nan"),
        }
        if "cpu_mb_s_after_startup" in ba and "cpu_mb_s_after_startup" in bz:
            g["net_cpu_mb_s_small"] = ba["cpu_mb_s_after_startup"]
            g["net_cpu_mb_s_large"] = bz["cpu_mb_s_after_startup"]
            g["net_cpu_mb_s_ratio"] = bz["cpu_mb_s_after_startup"] / ba["cpu_mb_s_after_startup"]
            net = f"{g['net_cpu_mb_s_small']:.1f} -> {g['net_cpu_mb_s_large']:.1f}"
            net_r = f"{g['net_cpu_mb_s_ratio']:.2f}"
        else:
            net, net_r = "—", "—"
        data[tool] = g
        mbs = f"{g['mb_s_small']:.1f} -> {g['mb_s_large']:.1f}"
        rss = f"{g['rss_small_mb']:.1f} -> {g['rss_large_mb']:.1f} MB"
        lines.append(
            f"  {tool:<11}{g['wall_ratio']:>8.2f}{mbs:>22}{g['mb_s_ratio']:>7.2f}{net:>28}{net_r:>7}"
            f"{rss:>26}{g['rss_ratio']:>7.2f}"
        )
    return "\n".join(lines), data


# ---------------------------------------------------------------------------
# main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,100", help="corpus sizes in MB, comma-separated (10 to 1024)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mix", default="noisy", help="corpus mix: noisy (default), noisy-nonccl or nccl (bench/generate.py)")
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the corpora generated by this run and the tools' outputs under bench/data/ "
        "(corpora found there already are always reused and never deleted)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="at most this many interleaved runs per tool and size; the median is reported (default 3)",
    )
    ap.add_argument(
        "--repeat-budget",
        type=float,
        default=60.0,
        help="no further runs of a tool once its runs on a size took this many seconds "
        "(default 60: fast tools run 3 times, mtail on big corpora once)",
    )
    ap.add_argument("--tools", default=",".join(TOOLS), help="subset of rankwatch,rankwatch-1,mtail,grep")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="also run rankwatch under cProfile and print the top 25 functions by cumulative time",
    )
    ap.add_argument(
        "--profile-size",
        type=float,
        default=None,
        help="corpus size to profile (default: the smallest requested)",
    )
    ap.add_argument("--timeout", type=float, default=3600, help="seconds before a tool run is killed")
    ap.add_argument("--data-dir", type=Path, default=BENCH / "data")
    ap.add_argument("--results", type=Path, default=BENCH / "results" / "latest.json")
    ap.add_argument(
        "--no-equivalence",
        action="store_true",
        help="skip the per-pattern mtail-vs-grep count check on the smallest corpus",
    )
    a = ap.parse_args(argv)

    global _GNU_TIME
    _GNU_TIME = _gnu_time()
    sizes = sorted({float(s) for s in a.sizes.split(",") if s.strip()})
    tools = [t for t in TOOLS if t in {x.strip() for x in a.tools.split(",")}]
    unavailable: dict[str, str] = {}
    if set(tools) & set(RANKWATCH_TOOLS):
        ok, why = rankwatch_available()
        if not ok:
            for t in RANKWATCH_TOOLS:
                unavailable[t] = f"unavailable: `{' '.join(rankwatch_cmd())} diagnose --help` failed: {why}"
    if "mtail" in tools and not mtail_bin():
        unavailable["mtail"] = "unavailable: mtail not on PATH (apt-get install -y mtail)"
    if "grep" in tools and not shutil.which("grep"):
        unavailable["grep"] = "unavailable: grep not on PATH"

    env_info = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "mtail": tool_version([mtail_bin() or "mtail", "--version"]),
        "grep": tool_version(["grep", "--version"]),
        "rankwatch_cmd": " ".join(rankwatch_cmd()),
        "peak_rss_source": "GNU time %M" if _GNU_TIME else "wait4 ru_maxrss (inflated by the parent's RSS)",
        "loadavg_at_start": list(os.getloadavg()),
    }
    print(f"# rankwatch benchmark  ({env_info['cpu']}, {env_info['cpus']} CPUs, Python {env_info['python']})")
    print(f"# mtail: {env_info['mtail']}")
    print(f"# grep:  {env_info['grep']}")
    for tool, why in unavailable.items():
        print(f"# {tool}: {why}")
    if not _GNU_TIME:
        print("# peak RSS from wait4: includes this Python process's RSS at fork (apt-get install time)")
    busy = os.getloadavg()[0]
    if busy > (os.cpu_count() or 1) * 0.75:
        print(
            f"# note: load average {busy:.1f} on {os.cpu_count()} CPUs; wall times are noisy, cpu s is steadier"
        )
    print()

    a.data_dir.mkdir(parents=True, exist_ok=True)
    generated: list[Path] = []
    entries: list[dict] = []
    equivalence: dict | None = None
    profile_text = ""
    work = Path(tempfile.mkdtemp(prefix="rankwatch-bench-", dir=a.data_dir))
    startup: dict[str, dict[str, float]] = {}
    try:
        # fixed cost of each tool (process start, imports, program compilation) on a tiny
        # corpus; this also warms caches (.pyc files, binaries) before anything is timed
        tiny = work / "tiny"
        tiny.mkdir()
        for r in range(8):
            (tiny / f"rank{r}.log").write_text(
                f"gpu-node-017:{4000 + r}:{4000 + r} [{r}] NCCL INFO cudaDriverVersion 12040\n"
            )
        tiny_files = sorted(tiny.glob("rank*.log"))
        for tool in tools:
            if tool in unavailable:
                continue
            cmd, env = argv_for(tool, tiny, tiny_files)
            runs = [measure(tool, cmd, work / "tiny-out", env=env, timeout=a.timeout) for _ in range(3)]
            startup[tool] = {"wall_s": min(r.wall_s for r in runs), "cpu_s": min(r.cpu_s for r in runs)}
        if startup:
            print(
                "start-up cost on a tiny corpus (best of 3): "
                + ", ".join(
                    f"{t} {v['wall_s']:.3f} s wall / {v['cpu_s']:.3f} s cpu" for t, v in startup.items()
                )
            )
            print()
        for size in sizes:
            corpus = a.data_dir / f"{size:g}mb-{a.mix}-seed{a.seed}"
            m = load_manifest(corpus, size, a.seed, a.mix)
            if m is None:
                print(f"generating {corpus} ...", flush=True)
                m = generate(corpus, size, a.seed, mix=a.mix)
                generated.append(corpus)
                print(
                    f"  {m['bytes'] / MB:.1f} MB, {m['lines']:,} lines in {m['generate_seconds']} s",
                    flush=True,
                )
            files = [corpus / f["path"] for f in m["files"]]
            warm_cache(files)
            load_before = os.getloadavg()[0]
            entry: dict = {
                "corpus": {
                    "path": str(corpus),
                    "size_mb": size,
                    "seed": a.seed,
                    "files": len(files),
                    "bytes": m["bytes"],
                    "lines": m["lines"],
                    "cr_segments": m["cr_segments"],
                    "steps": m["steps"],
                    "expected": m["expected"],
                    "mix": m.get("mix", "nccl"),
                },
                "line_mix": m.get("line_mix"),
                "tools": {},
            }
            out_dir = work / f"{size:g}mb"
            # interleaved: every tool once, then every tool again, so that a change in the
            # machine's load hits all of them alike; the median run of each is reported
            done: dict[str, list[Run]] = {t: [] for t in tools}
            stopped: set[str] = set(unavailable)
            for i in range(max(1, a.repeat)):
                for tool in tools:
                    if tool in stopped:
                        continue
                    if i and sum(r.wall_s for r in done[tool]) >= a.repeat_budget:
                        continue
                    cmd, env = argv_for(tool, corpus, files)
                    r = measure(tool, cmd, out_dir, env=env, timeout=a.timeout, tag=f".{i}")
                    done[tool].append(r)
                    if r.error or r.timed_out:
                        stopped.add(tool)
            for tool in tools:
                tr = ToolResult(tool)
                if tool in unavailable:
                    tr.status = unavailable[tool]
                    entry["tools"][tool] = asdict(tr)
                    continue
                for r in done[tool]:
                    tr.runs.append(
                        {k: v for k, v in asdict(r).items() if k != "stdout_path"} | {"cpu_s": r.cpu_s}
                    )
                good = sorted((r for r in done[tool] if not (r.error or r.timed_out)), key=lambda r: r.wall_s)
                best: Run | None = good[(len(good) - 1) // 2] if good else None  # the median (lower one)
                last = tr.runs[-1]
                if best is None:
                    tr.status = "failed: " + (last["error"] or f"timed out after {a.timeout:g} s")
                else:
                    nb, nl = m["bytes"], m["lines"]
                    tr.best = {
                        "wall_s": best.wall_s,
                        "cpu_s": best.cpu_s,
                        "user_s": best.user_s,
                        "sys_s": best.sys_s,
                        "maxrss_mb": best.maxrss_kb / 1024,
                        "mb_s": _mbs(nb, best.wall_s),
                        "lines_s": nl / best.wall_s if best.wall_s else float("nan"),
                        "rc": best.rc,
                        "cpu_mb_s": _mbs(nb, best.cpu_s),
                        "rss_source": best.rss_source,
                        "runs": len(tr.runs),
                    }
                    st = startup.get(tool)
                    if st is not None:
                        tr.best["startup"] = st
                        if best.wall_s > st["wall_s"]:
                            tr.best["mb_s_after_startup"] = _mbs(nb, best.wall_s - st["wall_s"])
                        if best.cpu_s > st["cpu_s"]:
                            tr.best["cpu_mb_s_after_startup"] = _mbs(nb, best.cpu_s - st["cpu_s"])
                    if tool in RANKWATCH_TOOLS:
                        tr.found = summarize_rankwatch(Path(best.stdout_path), m["expected"])
                        if best.rc not in (0, 3) and not tr.found.get("ok"):
                            tr.status = f"failed: rc={best.rc}: {best.stderr_tail.strip().splitlines()[-1:]}"
                    elif tool == "mtail":
                        tr.found = summarize_mtail(Path(best.stdout_path))
                        if tr.found.get("ok") and tr.found["lines"] != m["lines"]:
                            tr.found["note_lines"] = (
                                f"mtail read {tr.found['lines']} lines, corpus has {m['lines']}"
                            )
                        if equivalence is None and not a.no_equivalence:
                            equivalence = check_equivalence(files, tr.found)
                        tr.found.pop("per_file_pattern", None)
                    elif tool == "grep":
                        tr.found = summarize_grep(Path(best.stdout_path))
                        if best.rc not in (0, 1):
                            tr.status = f"failed: rc={best.rc}: {best.stderr_tail.strip()[-300:]}"
                entry["tools"][tool] = asdict(tr)
                shown = f"{tr.best['wall_s']:.3f} s" if tr.status == "ok" else tr.status
                print(f"  {size:g} MB  {tool:<9} {shown}", flush=True)
            ok = {t: v["best"] for t, v in entry["tools"].items() if v["status"] == "ok"}
            entry["same_json"] = same_json(done) if all(t in ok for t in RANKWATCH_TOOLS) else None
            entry["speed"] = {
                t: {o: ok[t]["mb_s"] / ok[o]["mb_s"] for o in ("mtail", "grep", "rankwatch-1") if o in ok and o != t}
                for t in RANKWATCH_TOOLS
                if t in ok
            }
            ratios = {}
            for other in ("mtail", "grep"):
                if "rankwatch" in ok and other in ok:
                    rw, ot = ok["rankwatch"], ok[other]
                    ratios[f"rankwatch/{other}"] = {
                        "wall": rw["wall_s"] / ot["wall_s"],
                        "cpu": rw["cpu_s"] / ot["cpu_s"] if ot["cpu_s"] else float("nan"),
                        "mb_s": rw["mb_s"] / ot["mb_s"],
                        "rss": rw["maxrss_mb"] / ot["maxrss_mb"] if ot["maxrss_mb"] else float("nan"),
                    }
            entry["ratios"] = ratios
            entry["loadavg_1m"] = {"before": load_before, "after": os.getloadavg()[0]}
            entries.append(entry)
            print()
            print(table_for_size(entry))
            print(flush=True)
            if a.profile and (a.profile_size == size or (a.profile_size is None and size == sizes[0])):
                if "rankwatch" in unavailable:
                    profile_text = f"--profile: rankwatch {unavailable['rankwatch']}"
                else:
                    profile_text = profile_rankwatch(corpus, out_dir)

        gtext, gdata = growth_text(entries)
        for tool, v in startup.items():
            gdata.setdefault(tool, {})["startup"] = v
        if gtext:
            print(gtext)
            print()
        if equivalence is not None:
            print(equivalence_text(equivalence))
            print()
        if profile_text:
            print(profile_text)

        result = {
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "environment": env_info,
            "settings": {
                "sizes": sizes,
                "seed": a.seed,
                "repeat": a.repeat,
                "repeat_budget_s": a.repeat_budget,
                "tools": tools,
            },
            "sizes": entries,
            "startup": startup,
            "growth": gdata,
            "equivalence": equivalence,
        }
        a.results.parent.mkdir(parents=True, exist_ok=True)
        a.results.write_text(json.dumps(result, indent=2, default=str) + "\n")
        print(f"results written to {a.results}")
        if a.keep:
            kept = a.data_dir / "last-outputs"
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(work, kept)
            print(f"tool outputs kept in {kept}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not a.keep:
            for c in generated:
                shutil.rmtree(c, ignore_errors=True)
                manifest_path(c).unlink(missing_ok=True)
    return 0


def same_json(done: dict[str, list[Run]]) -> bool:
    """Every parallel run printed the same report, byte for byte, as every ``--jobs 1`` run."""
    outs = set()
    for t in RANKWATCH_TOOLS:
        for r in done.get(t, []):
            if not (r.error or r.timed_out):
                try:
                    outs.add(Path(r.stdout_path).read_bytes())
                except OSError:
                    return False
    return len(outs) == 1


def equivalence_text(e: dict) -> str:
    s = [
        f"mtail/grep equivalence (smallest corpus): {e['mtail_patterns']} mtail fingerprints, "
        f"{e['grep_patterns']} grep patterns, identical regex lists: {'yes' if e['same_regexes'] else 'NO'}"
    ]
    if "note" in e:
        s.append("  " + e["note"])
    elif e["count_mismatches"]:
        s.append(
            f"  {len(e['count_mismatches'])} per-file/per-pattern count mismatches, e.g. {e['count_mismatches'][:3]}"
        )
    else:
        hits = {k: v for k, v in sorted(e.get("per_pattern_totals", {}).items()) if v}
        s.append(
            "  every per-file, per-pattern count of mtail equals `grep -c -E -e PATTERN` "
            f"(patterns with hits: {hits})"
        )
    return "\n".join(s)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
