"""What a quiet sidecar loads: the modules its RSS budget (≤ 60 MB with 1024 files,
bench/README.md) has no room for stay out until something needs them.

Checked in a fresh interpreter, by module name: rich only prints (the text report, a
console), PyYAML only reads a YAML config file (or an uncached catalog), and the scanner
imports only the engine it uses.
"""

from __future__ import annotations

import json
import os
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
from monitor.scancache import install
install()  # as the CLI does: the validated catalog comes from the cache once it is there
setup("text")  # stderr is a pipe here, as under systemd or kubernetes: no rich handler
default_parser()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("rich", "re2", "hyperscan", "yaml"))))
"""


def _loaded(code: str, env: dict[str, str] | None = None) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_quiet_sidecar_loads_neither_rich_nor_an_unused_scan_engine(tmp_path: Path) -> None:
    env = {**os.environ, "RANKWATCH_CACHE_DIR": str(tmp_path)}
    _loaded(_PROBE, env)  # the first start fills the cache
    loaded = _loaded(_PROBE, env)
    assert not [m for m in loaded if m.split(".")[0] == "rich"], loaded
    assert not [m for m in loaded if m.split(".")[0] == "yaml"], loaded  # only a YAML config file needs it
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


def test_a_json_diagnose_loads_neither_pydantic_nor_yaml_once_the_catalog_is_cached(tmp_path: Path) -> None:
    """``diagnose --format json`` is a command people and CI run many times: the validated
    catalog comes from the cache (no PyYAML, no pydantic models) and the command line does not
    coerce its parameters through pydantic (typer < 0.29): ~0.25 s of every start."""
    logs = tmp_path / "job"
    logs.mkdir()
    (logs / "rank0.log").write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n", encoding="utf-8")
    probe = ("import json, sys\nfrom monitor.cli import main\n"
             f"sys.argv = ['rankwatch', 'diagnose', {str(logs)!r}, '--format', 'json', '--output', {str(tmp_path / 'r.json')!r}]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'yaml', 'rich'})))")
    env = {**os.environ, "RANKWATCH_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, env=env)
            for _ in range(2)]
    first, second = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert "yaml" in first  # the first start validated the YAML (and filled the cache) ...
    assert second == [], second  # ... the second loaded none of them
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["incidents"][0]["failure"] == "cuda_oom"
