"""The web pages' server side, over real HTTP (aiohttp's test server on a loopback port):
the Host-header check, the Origin check, the security headers, upload limits, and dropped
folders diagnosed from memory exactly like the same folder on disk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from aiohttp import ClientResponse, FormData
from aiohttp.test_utils import TestClient, TestServer

from monitor.config import load_config
from monitor.daemon import Daemon
from monitor.diagnose import diagnose_paths
from monitor.inputs import from_memory
from monitor.web.guard import host_name
from monitor.web.serve import ServeOptions, diagnose_upload, job_name, make_app
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "e2e" / "golden"


def text_form(text: str) -> FormData:
    """What the page sends for a paste."""
    form = FormData(default_to_multipart=True)
    form.add_field("text", text)
    return form


async def answer(r: ClientResponse) -> tuple[list[dict], dict]:
    """The NDJSON answer of POST /api/diagnose: (progress lines, result)."""
    assert r.status == 200, await r.text()
    msgs = [json.loads(line) for line in (await r.text()).splitlines()]
    assert all("progress" in m for m in msgs[:-1])
    return [m["progress"] for m in msgs[:-1]], msgs[-1]["result"]


def folder_form(root: Path, under: str) -> FormData:
    """What the page sends for a dropped folder: ``path`` + ``file`` pairs, paths relative to it."""
    form = FormData()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            form.add_field("path", f"{under}/{p.relative_to(root).as_posix()}")
            form.add_field("file", p.read_bytes(), filename=p.name)
    return form


def test_host_name_forms() -> None:
    assert host_name("127.0.0.1:8080") == "127.0.0.1"
    assert host_name("[::1]:19480") == "::1"
    assert host_name("Evil.Example.:80") == "evil.example"
    assert host_name("localhost") == "localhost"


def test_job_name_from_dropped_paths() -> None:
    assert job_name(["logs/torchrun/a/attempt_0/0/stderr.log", "logs/launcher.log"]) == "logs"
    assert job_name(["pasted text"]) == "pasted log"
    assert job_name(["rank_0.log", "rank_1.log"]) == "dropped logs"


def test_memory_layout_is_understood_like_the_disk() -> None:
    """A torchrun --log-dir folder held in memory gives the same verdict as on disk (paths kept)."""
    root = GOLDEN / "exception-logdir" / "logs"
    items = [(f"logs/{p.relative_to(root).as_posix()}", p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]
    files, _ = from_memory(items)
    local = {f.display.split("/")[-2]: f.local_rank for f in files if f.display.endswith("stderr.log")}
    assert local == {"0": 0, "1": 1, "2": 2, "3": 3}
    assert sum(f.kind == "error_json" for f in files) == 3
    mem, _ = diagnose_upload(items)
    disk = diagnose_paths([str(root)])
    expected = json.loads((GOLDEN / "exception-logdir" / "expected.json").read_text())
    summary = [(i["failure"], i["initiator"]["rank"]) for i in mem.report["incidents"]]
    assert summary == [(i["failure"], i["initiator"]["rank"]) for i in disk.report["incidents"]]
    assert summary[0] == (expected["failure"], expected["initiator_rank"])


async def serve_client(**kw: object) -> TestClient:
    client = TestClient(TestServer(make_app(ServeOptions(**kw))))  # type: ignore[arg-type]
    await client.start_server()
    return client


async def test_paste_and_report_routes() -> None:
    client = await serve_client()
    try:
        page = await client.get("/")
        assert page.status == 200
        csp = page.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp.split("style-src")[0]
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        text = (GOLDEN / "exception-console" / "logs" / "console.log").read_text()
        progress, body = await answer(await client.post("/api/diagnose", data=text_form(text)))
        assert progress[0] == {"bytes": 0, "total": len(text.encode())}
        assert body["bytes"] == len(text.encode()) and body["files"] == 1
        assert (body["report"]["incidents"][0]["failure"], body["report"]["incidents"][0]["initiator"]["rank"]) == ("rank_exception", 2)
        rep = await client.get(f"/report/{body['id']}.html")
        html = await rep.text()
        assert "Initiated by rank 2" in html and "sandbox" in rep.headers["Content-Security-Policy"]
        assert "script-src" not in rep.headers["Content-Security-Policy"]  # default-src 'none': no script at all
        red = await client.get(f"/report/{body['id']}.html?redact=1&download=1")
        assert red.headers["Content-Disposition"] == 'attachment; filename="rankwatch-report-redacted.html"'
        assert "/home/user/job" in html and "/home/user/job" not in await red.text()  # --redact: paths anonymised
        md = await client.get(f"/report/{body['id']}.md?redact=1")
        assert md.status == 200 and "rank_exception" in await md.text()
        assert (await client.get("/report/nope.html")).status == 404
        assert (await client.get("/static/../serve.py")).status == 404
    finally:
        await client.close()


async def test_dropped_folder_upload_keeps_relative_paths() -> None:
    client = await serve_client()
    try:
        _, body = await answer(await client.post("/api/diagnose", data=folder_form(GOLDEN / "sigkill-logdir" / "logs", "logs")))
        inc = body["report"]["incidents"][0]
        assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_killed", 1)
        assert body["report"]["job"] == "logs" and body["files"] >= 8
    finally:
        await client.close()


async def test_upload_limit_is_a_clear_refusal() -> None:
    client = await serve_client(max_bytes=4096)
    try:
        r = await client.post("/api/diagnose", data=text_form("x" * 10_000))
        assert r.status == 413
        assert "rankwatch diagnose DIR" in (await r.json())["error"]
        limits = await (await client.get("/api/limits")).json()
        assert limits["max_bytes"] == 4096
        empty = await client.post("/api/diagnose", data=text_form("  "))
        assert empty.status == 400 and "nothing to diagnose" in (await empty.json())["error"]
        form = FormData()
        form.add_field("path", "job/model.safetensors")
        form.add_field("file", b"\x00" * 64, filename="model.safetensors")
        binary = await client.post("/api/diagnose", data=form)
        assert binary.status == 422
        assert "skipped job/model.safetensors: not a text log" in (await binary.json())["error"]
    finally:
        await client.close()


async def test_dns_rebinding_and_cross_origin_refused() -> None:
    client = await serve_client(allow_hosts=["node7.example"])
    try:
        assert (await client.get("/", headers={"Host": "attacker.example:19480"})).status == 403
        for ok in ("localhost:1", "127.0.0.1:2", "[::1]:3", "node7.example:4"):
            assert (await client.get("/", headers={"Host": ok})).status == 200, ok
        r = await client.post("/api/diagnose", data=text_form("x"), headers={"Origin": "http://attacker.example"})
        assert r.status == 403
        r = await client.post("/api/diagnose", data=text_form("x"), headers={"Origin": "null"})
        assert r.status == 403
    finally:
        await client.close()


async def test_daemon_live_page_and_host_check(tmp_path: Path) -> None:
    cfg = load_config(None, logs=[str(tmp_path / "*.log")], job="live", metrics_addr="127.0.0.1:0",
                      state_dir=tmp_path / "state", allow_hosts=["rankwatch.node7.example"], host="node7")
    client = TestClient(TestServer(Daemon(cfg, log=lambda m: None).app()))
    await client.start_server()
    try:
        page = await client.get("/")
        assert page.status == 200 and "/api/incidents" in await page.text() and "/metrics" in await page.text()
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        assert (await client.get("/static/live.js")).headers["Content-Type"].startswith("text/javascript")
        assert (await client.get("/", headers={"Host": "rebound.example"})).status == 403
        for name in ("rankwatch.node7.example:19470", "node7:19470", "10.0.0.7:19470"):
            assert (await client.get("/", headers={"Host": name})).status == 200, name
        assert (await client.get("/api/incidents", headers={"Host": "rebound.example"})).status == 403
        # Prometheus and probes may use any name
        assert (await client.get("/metrics", headers={"Host": "rankwatch.monitoring.svc:19470"})).status == 200
        assert (await client.get("/healthz", headers={"Host": "10-0-0-7.pod"})).status == 200
        rep = await client.get("/report.html")
        assert rep.status == 200 and "No incident found." in await rep.text()
    finally:
        await client.close()


def test_serve_refuses_a_bad_address() -> None:
    r = subprocess.run([sys.executable, "-m", "monitor", "serve", "--addr", "nowhere"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--addr: expected HOST:PORT" in r.stderr
