"""The pages in a real browser: headless Chromium (Debian's ``chromium`` + ``chromium-driver``)
driven by Selenium against a real ``rankwatch serve`` and a real ``rankwatch run``.

Waits are conditions (``WebDriverWait`` until the page shows the answer), never sleeps; their
bound is generous and only stops a broken run. With ``RANKWATCH_UPDATE_SCREENSHOT=1`` the
screenshots of both pages are written to docs/images/ for the README.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import free_port, stop_process

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

GOLDEN = REPO / "tests" / "e2e" / "golden"
IMAGES = REPO / "docs" / "images"
UPDATE = os.environ.get("RANKWATCH_UPDATE_SCREENSHOT") == "1"
WAIT = 120  # seconds: only a bound for a broken run, the page normally answers at once
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,1500"]
HOSTILE = "[rank0]: ValueError: bad sample <script>window.pwned=1</script> <img src=x onerror=\"window.pwned=2\"> \x1b[31mred\x1b[0m end"


def _exe(*names: str) -> str | None:
    return next((p for n in names if (p := shutil.which(n)) is not None), None)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    chromium, driver = _exe("chromium", "chromium-browser"), _exe("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("chromium / chromium-driver are not installed (make test installs them)")
    opts = Options()
    opts.binary_location = chromium
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console messages, CSP violations included
    for flag in [*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        opts.add_argument(flag)
    drv = webdriver.Chrome(options=opts, service=Service(executable_path=driver))
    try:
        yield drv
    finally:
        drv.quit()


_DRAINS: dict[int, threading.Thread] = {}


def _start(args: list[str], tmp: Path) -> tuple[subprocess.Popen[str], str]:
    """Start ``python -m monitor …`` and read the URL it prints."""
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = subprocess.Popen([sys.executable, "-m", "monitor", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        if "http://" in line:
            url = line[line.index("http://"):].split()[0].rstrip(";")
            drain = threading.Thread(target=proc.stdout.read, daemon=True)  # keep the pipe from filling
            drain.start()
            _DRAINS[proc.pid] = drain
            return proc, url[: url.index("/", len("http://"))] + "/"
    proc.wait(timeout=10)
    proc.stdout.close()
    raise AssertionError(f"{args} exited ({proc.returncode}) without printing its URL")


def _stop(proc: subprocess.Popen[str]) -> None:
    stop_process(proc)
    if (drain := _DRAINS.pop(proc.pid, None)) is not None:
        drain.join(timeout=30)
    if proc.stdout is not None:
        proc.stdout.close()


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("serve-tmp")
    proc, url = _start(["serve", "--addr", "127.0.0.1:0"], tmp)
    try:
        yield url
    finally:
        _stop(proc)
    assert list(tmp.iterdir()) == [], "rankwatch serve wrote files to disk"


def _diagnosed(drv: WebDriver, before: str | None = None) -> str:
    """Wait until the page shows a diagnosis (a new one when ``before`` is given); the initiating rank."""
    def shown(d: WebDriver) -> str | bool:
        if "hidden" in d.find_element(By.ID, "summary").get_attribute("class"):
            return False
        src = d.find_element(By.ID, "report").get_attribute("src")
        return src if src != before else False

    WebDriverWait(drv, WAIT).until(shown)
    return drv.find_element(By.ID, "verdict-rank").text


def _csp_violations(drv: WebDriver) -> list[str]:
    """Console messages about the Content-Security-Policy since the last call (none expected:
    the pages only load their own scripts and styles)."""
    return [e["message"] for e in drv.get_log("browser") if "Content Security Policy" in e["message"]]


def _paste(drv: WebDriver, text: str) -> None:
    box = drv.find_element(By.ID, "paste")
    box.clear()
    # what a paste does: the whole text at once, then one input event
    drv.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", box, text)


def _report_text(drv: WebDriver) -> str:
    drv.switch_to.frame(drv.find_element(By.ID, "report"))
    try:
        WebDriverWait(drv, WAIT).until(lambda d: d.find_elements(By.TAG_NAME, "main"))
        return drv.find_element(By.TAG_NAME, "body").text
    finally:
        drv.switch_to.default_content()


def test_pasted_torchrun_traceback_names_the_initiating_rank(browser: WebDriver, serve: str) -> None:
    browser.get(serve)
    expected = json.loads((GOLDEN / "exception-console" / "expected.json").read_text())
    _paste(browser, (GOLDEN / "exception-console" / "logs" / "console.log").read_text())
    assert _diagnosed(browser) == str(expected["initiator_rank"])
    assert browser.find_element(By.ID, "verdict-failure").text == expected["failure"]
    report = _report_text(browser)
    assert f"Initiated by rank {expected['initiator_rank']}" in report
    assert "Collateral (consequences, not causes)" in report and "Verify" in report
    assert _csp_violations(browser) == []
    if UPDATE:
        IMAGES.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(IMAGES / "serve.png"))


def test_pasted_two_rank_nccl_timeout_excerpt(browser: WebDriver, serve: str, real_logs: Path) -> None:
    """Rank 2's OOM and rank 5's watchdog timeout, pasted (FunASR issue 2006)."""
    case = real_logs / "036-funasr-rank2-oom-peers-timeout"
    lines = (case / "combined.log").read_text().splitlines()
    excerpt = "\n".join([lines[0], next(ln for ln in lines if ln.startswith("[rank5]:") and "Watchdog caught" in ln)])
    browser.get(serve)
    _paste(browser, excerpt)
    meta = json.loads((case / "case.json").read_text())
    assert _diagnosed(browser) == str(meta["expected_initiating_rank"])
    assert browser.find_element(By.ID, "verdict-failure").text == meta["expected_initiating_class"]
    assert "rank 5 (collective_timeout" in _report_text(browser)


@pytest.mark.parametrize("case", ["exception-logdir", "sigkill-logdir"])
def test_dropped_torchrun_log_folder(browser: WebDriver, serve: str, case: str) -> None:
    """A torchrun --log-dir folder chosen with the folder picker (``webkitdirectory``): the local
    rank comes from ``attempt_0/<n>/`` in the relative paths the browser keeps."""
    expected = json.loads((GOLDEN / case / "expected.json").read_text())
    browser.get(serve)
    browser.find_element(By.ID, "folder").send_keys(str(GOLDEN / case / "logs"))
    assert _diagnosed(browser) == str(expected["initiator_rank"])
    assert browser.find_element(By.ID, "verdict-failure").text == expected["failure"]
    assert f"attempt_0/{expected['initiator_rank']}/" in _report_text(browser)


DROP = """
const [target, files] = arguments;
const dt = new DataTransfer();
for (const [name, text] of files) dt.items.add(new File([text], name, {type: "text/plain"}));
for (const type of ["dragenter", "dragover", "drop"]) {
  target.dispatchEvent(new DragEvent(type, {dataTransfer: dt, bubbles: true, cancelable: true}));
}
"""


def test_several_rank_files_dropped_at_once(browser: WebDriver, serve: str) -> None:
    """Every rank's file dropped on the drop zone together (the rank comes from each file name)."""
    case = GOLDEN / "exception-perrank"
    expected = json.loads((case / "expected.json").read_text())
    files = [[p.name, p.read_text()] for p in sorted((case / "logs").rglob("*.log"))]
    assert len(files) == 5
    browser.get(serve)
    browser.execute_script(DROP, browser.find_element(By.ID, "drop"), files)
    assert _diagnosed(browser) == str(expected["initiator_rank"])
    assert "5 file(s)" in browser.find_element(By.ID, "verdict-input").text


def test_hostile_log_line_renders_as_text(browser: WebDriver, serve: str) -> None:
    browser.get(serve)
    _paste(browser, HOSTILE + "\n")
    _diagnosed(browser)
    text = _report_text(browser)
    assert "<script>window.pwned=1</script>" in text and "<img src=x onerror=" in text and "red" in text
    browser.switch_to.frame(browser.find_element(By.ID, "report"))
    try:
        assert browser.find_elements(By.TAG_NAME, "script") == [] and browser.find_elements(By.TAG_NAME, "img") == []
    finally:
        browser.switch_to.default_content()
    assert browser.execute_script("return window.pwned === undefined")
    # the redacted version (what is shared) is rendered the same way
    browser.find_element(By.ID, "show-redacted").click()
    WebDriverWait(browser, WAIT).until(lambda d: "redact=1" in (d.find_element(By.ID, "report").get_attribute("src") or ""))
    assert "<script>window.pwned=1</script>" in _report_text(browser)


def test_oversized_input_is_refused_with_a_message(browser: WebDriver, tmp_path: Path) -> None:
    """A paste over the server's limit (``--max-bytes 4096`` here) is refused before anything is sent."""
    proc, url = _start(["serve", "--addr", "127.0.0.1:0", "--max-bytes", "4096"], tmp_path)
    try:
        browser.get(url)
        WebDriverWait(browser, WAIT).until(
            lambda d: d.execute_script("return fetch('/api/limits').then(r => r.json()).then(l => l.max_bytes)") == 4096)
        _paste(browser, "x" * 5000)
        status = browser.find_element(By.ID, "status")
        WebDriverWait(browser, WAIT).until(lambda d: "than this page accepts" in status.text)  # page check or server 413
        assert "rankwatch diagnose DIR" in status.text and "error" in status.get_attribute("class")
        assert "hidden" in browser.find_element(By.ID, "summary").get_attribute("class")  # nothing was diagnosed
    finally:
        _stop(proc)


# ----------------------------------------------------------------------------- the daemon's live page
def _replay(src: Path, dst: Path, lines_per_write: int = 5) -> None:
    """Write every rank's log into the daemon's folder a few lines at a time, ranks interleaved."""
    files = {p.relative_to(src): p.read_text().splitlines(keepends=True) for p in sorted(src.rglob("*.log"))}
    for rel in files:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
    pos = dict.fromkeys(files, 0)
    while any(pos[r] < len(files[r]) for r in files):
        for rel, lines in files.items():
            chunk = lines[pos[rel]:pos[rel] + lines_per_write]
            pos[rel] += len(chunk)
            if chunk:
                with open(dst / rel, "a", encoding="utf-8") as fh:
                    fh.write("".join(chunk))


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    logs = tmp_path / "logs"
    logs.mkdir()
    proc, url = _start(["run", "--logs", str(logs / "**" / "*.log"), "--job", "replay", "--quiet",
                        "--metrics-addr", f"127.0.0.1:{free_port()}", "--state-dir", str(tmp_path / "state")], tmp_path)
    try:
        yield url, logs
    finally:
        _stop(proc)


def test_live_page_shows_an_incident_while_a_job_is_replayed(browser: WebDriver, daemon: tuple[str, Path]) -> None:
    url, logs = daemon
    expected = json.loads((GOLDEN / "exception-perrank" / "expected.json").read_text())
    browser.get(url)
    WebDriverWait(browser, WAIT).until(lambda d: "No incident so far." in d.find_element(By.ID, "verdict-title").text)
    links = {a.text: a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "header nav a")}
    assert links["/metrics"] == url + "metrics" and links["/api/incidents"] == url + "api/incidents"
    browser.execute_script("window.notReloaded = true")
    _replay(GOLDEN / "exception-perrank" / "logs", logs)
    inc = WebDriverWait(browser, WAIT).until(
        lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, "#incidents .inc")
                        if expected["failure"] in e.text), None))
    assert inc.get_attribute("data-rank") == str(expected["initiator_rank"])
    assert inc.get_attribute("data-state") in ("open", "updated", "closed")
    assert f"Initiated by rank {expected['initiator_rank']}" in browser.find_element(By.ID, "verdict-sub").text
    assert browser.execute_script("return window.notReloaded === true"), "the page reloaded instead of refreshing"
    assert _csp_violations(browser) == []
    if UPDATE:
        IMAGES.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(IMAGES / "live.png"))


def test_live_page_renders_hostile_lines_as_text(browser: WebDriver, daemon: tuple[str, Path]) -> None:
    url, logs = daemon
    browser.get(url)
    (logs / "rank_0.log").write_text(HOSTILE + "\n")
    WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#incidents .inc pre"))
    text = browser.find_element(By.ID, "incidents").text
    assert "<script>window.pwned=1</script>" in text and "onerror=" in text
    assert browser.find_elements(By.CSS_SELECTOR, "#incidents script, #incidents img") == []
    assert browser.execute_script("return window.pwned === undefined")
