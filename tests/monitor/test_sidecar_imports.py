"""What a quiet sidecar loads: the modules its RSS budget (≤ 60 MB with 1024 files,
bench/README.md) has no room for stay out until something needs them.

Checked in a fresh interpreter, by module name: rich only prints (the text report, a
console), and the scanner imports only the engine it uses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from detectors.scanner import available_engines, best_engine

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
import monitor.cli, monitor.daemon, monitor.daemonlog, monitor.sinks, monitor.web.live
from monitor.daemonlog import setup
from detectors.parse import default_parser
setup("text")  # stderr is a pipe here, as under systemd or kubernetes: no rich handler
default_parser()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("rich", "re2", "hyperscan"))))
"""


def _loaded(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_quiet_sidecar_loads_neither_rich_nor_an_unused_scan_engine() -> None:
    loaded = _loaded(_PROBE)
    assert not [m for m in loaded if m.split(".")[0] == "rich"], loaded
    engine = best_engine()
    assert engine in loaded or engine == "re"  # the engine it uses is there ...
    unused = [e for e in available_engines() if e not in (engine, "re")]
    assert not [m for m in loaded if m.split(".")[0] in unused], loaded  # ... the others are not


def test_the_text_report_still_loads_rich() -> None:
    # the lazy imports must not lose the renderers: the probe would pass with them broken
    loaded = _loaded("import json, sys\nfrom monitor.report import render_text\n"
                     "print(json.dumps(sorted(m for m in sys.modules if m.startswith('rich'))))")
    assert "rich.console" in loaded


def test_best_engine_is_the_first_available() -> None:
    assert best_engine() == available_engines()[0]
