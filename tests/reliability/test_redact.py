"""Safe to share: no secret leaves the machine; ``--redact`` also hides who and where.

Secrets are planted in real-format log lines (an HF token in a traceback, AWS keys in an
environment dump, a password in the URL of an NCCL bootstrap / c10d store line, ...) and
must be gone from every output: ``rankwatch diagnose`` as JSON, Markdown, text and HTML,
the live engine's incidents (console, MQTT incidents) and ``/api/incidents``. Nothing
else may change: every line of the real-logs corpus and of the golden torchrun logs
passes through unchanged.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.parse import default_parser
from detectors.parsers.base import FileState
from detectors.redact import redact, redact_text
from monitor.live import LiveEngine
from tests.conftest import REPO, SHARED

HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
GHP = "ghp_" + "1234567890abcdefghijABCDEFGHIJ123456"
GH_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
AKIA = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
WANDB = "0123456789abcdef0123456789abcdef01234567"

# (real-format line, secrets that must vanish, what must stay)
PLANTED = [
    (f"[rank1]: huggingface_hub.errors.HfHubHTTPError: 401 Client Error: Unauthorized for url: "
     f"https://huggingface.co/api/models/meta-llama/Llama-3-8B/revision/main (token={HF})", [HF], ["401 Client Error", "huggingface.co"]),
    (f'[rank1]:     hf_hub_download(repo_id, filename, token="{HF}")', [HF], ["hf_hub_download(repo_id"]),
    (f"[rank0]: environ({{'CUDA_VISIBLE_DEVICES': '0,1', 'AWS_ACCESS_KEY_ID': '{AKIA}', "
     f"'AWS_SECRET_ACCESS_KEY': '{AWS_SECRET}', 'WANDB_API_KEY': '{WANDB}'}})", [AKIA, AWS_SECRET, WANDB], ["CUDA_VISIBLE_DEVICES': '0,1'"]),
    (f"aws_secret_access_key = {AWS_SECRET}", [AWS_SECRET], ["aws_secret_access_key = "]),
    ("[2025-03-04 12:17:21] gpu-node-017:469398:469612 [3] NCCL INFO Bootstrap : Using eth0:10.0.3.17<0> "
     "store redis://admin:s3cr3tP4ss@store.cluster.internal:6379/0", ["s3cr3tP4ss"], ["NCCL INFO Bootstrap", "redis://admin:"]),
    ("[rank2]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 2/4 clients joined. "
     "init_method=tcp://trainer:hunter2@10.0.0.5:29500", ["hunter2"], ["DistStoreError", "@10.0.0.5:29500"]),
    (f"RuntimeError: git clone https://{GHP}@github.com/org/private.git failed (exit 128)", [GHP], ["github.com/org/private.git"]),
    (f"export GITHUB_TOKEN={GH_PAT}", [GH_PAT], ["export GITHUB_TOKEN="]),
    (f"requests.exceptions.HTTPError: 403 Forbidden, request headers: {{'Authorization': 'Bearer {JWT}', 'Accept': '*/*'}}",
     [JWT, JWT.split(".")[1]], ["403 Forbidden", "'Accept': '*/*'"]),
    ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", ["YWxhZGRpbjpvcGVuc2VzYW1l"], ["Authorization: Basic "]),
    ("sqlalchemy.exc.OperationalError: could not connect: host=db.corp user=ml password=Tr0ub4dor&3 sslmode=require",
     ["Tr0ub4dor"], ["sslmode=require"]),
    ("[rank0]: mlflow: passwd: letmein, retrying in 5s", ["letmein"], ["retrying in 5s"]),
    ("ValueError: bad key -----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEA75a8Xk2", ["MIIEowIBAAKCAQEA75a8Xk2"], ["ValueError: bad key"]),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter",
     ["b3BlbnNzaC1rZXktdjEAAAAA"], ["after"]),
    # issue #14 defect 13: the shapes the first version missed
    ("[rank0]: subprocess.CalledProcessError: Command '['psql', '--password', 'Pg-S3cret!', '-h', 'db']' returned 2",
     ["Pg-S3cret!"], ["CalledProcessError", "returned 2"]),
    ("+ python upload.py --password Hunter2x --retries 3", ["Hunter2x"], ["--retries 3"]),
    ("+ PGPASSWORD=Sup3rPg psql -h db -c 'select 1'", ["Sup3rPg"], ["psql -h db"]),
    ("connecting to store?user=ml&pass=Ov3rTheW4ll&db=runs", ["Ov3rTheW4ll"], ["user=ml", "db=runs"]),
    ("+ mysql -u ml -pMyS3cretPw -h db.internal runs < schema.sql", ["MyS3cretPw"], ["-u ml", "schema.sql"]),
    ("+ export MYSQL_PWD=dbPw0rd9", ["dbPw0rd9"], ["export MYSQL_PWD="]),
    ("+ huggingface-cli login --token tok3nV4lue9", ["tok3nV4lue9"], ["huggingface-cli login"]),
]


@pytest.mark.parametrize(("line", "secrets", "kept"), PLANTED, ids=[f"planted-{i}" for i in range(len(PLANTED))])
def test_planted_secret_is_redacted_and_the_rest_kept(line: str, secrets: list[str], kept: list[str]) -> None:
    out = redact_text(line)
    for s in secrets:
        assert s not in out, out
    for k in kept:
        assert k in out, out
    assert "[REDACTED:" in out
    assert redact_text(out) == out  # idempotent


HEALTHY = [
    "step 10 | loss 1.23 | grad_norm 0.5 | tokens/s 12345 | num_tokens=5000",
    "{'loss': 2.1034, 'grad_norm': 1.29, 'learning_rate': 4.8e-05, 'epoch': 0.1, 'num_input_tokens_seen': 40960}",
    "max_new_tokens: 128, pad_token_id: 0, token: 42",
    "host:1:2 [0] NCCL INFO Channel 00/32 :    0   1   2   3",
    "Traceback (most recent call last):",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_healthy_lines_are_untouched(line: str) -> None:
    assert redact_text(line) == line


def test_no_line_of_the_real_logs_or_golden_runs_changes() -> None:
    roots = [SHARED / "real-logs", REPO / "tests" / "e2e" / "golden", REPO / "monitor" / "examples"]
    n = 0
    for root in roots:
        for p in sorted(root.rglob("*")) if root.is_dir() else []:
            if not p.is_file():
                continue
            for line in p.read_text(errors="replace").splitlines():
                n += 1
                assert redact_text(line) == line, f"{p}: {line!r}"
    assert n > 1000 or not (SHARED / "real-logs").is_dir()


FRAGMENTS = [HF, AKIA, GHP, "password=", "token: ", "https://u:p@h/", "Authorization: Bearer ", "-----BEGIN PRIVATE KEY-----",
             "'", '"', " ", "=", ":", "@", "/", "[REDACTED:x]", "abc", "123", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=12).map("".join))
def test_redaction_is_idempotent_and_never_raises(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once
    for s in (HF, AKIA, GHP):
        if f" {s} " in f" {text} ":
            assert f" {s} " not in f" {once} ", once


# ---------------------------------------------------------------------- bundle mode
def test_bundle_placeholders_are_consistent_within_a_report() -> None:
    report = {
        "job": "run7",
        "incidents": [{
            "initiator": {"evidence": [
                {"path": "/home/alice/runs/run7/rank_1.log", "line": 3,
                 "text": "[2025-03-04 12:17:21] gpu-node-017:469398:469612 [3] NCCL WARN NET/IB : Got completion from peer "
                         "10.0.3.22<56318> with status=12"},
                {"path": "/home/alice/runs/run7/rank_1.log", "line": 9,
                 "text": '  File "/home/alice/proj/train.py", line 12, in <module> (on gpu-node-017 as alice@gpu-node-017)'},
                {"path": "/mnt/lustre/team-x/ckpt/rank_1.log", "line": 1,
                 "text": "loading /mnt/lustre/team-x/ckpt/model.pt and /opt/conda/lib/python3.10/site-packages/torch/serialization.py"},
            ]},
            "collateral": [{"rank": 0, "failure": "collective_timeout", "evidence": {"path": "/home/bob/rank_0.log", "line": 4}}],
            "root_cause": ["Rank 1 reported a NCCL error on gpu-node-017 (peer 10.0.3.22)."],
            "fix": "Check the link: ibstat on the host; see https://docs.nvidia.com/deeplearning/nccl/",
            "verify": "rankwatch diagnose /path/to/new/logs --fail-on nccl_error",
        }],
        "notes": [f"token={HF} seen in /home/alice/.bashrc"],
    }
    out = redact(report, bundle=True)
    text = json.dumps(out)
    for secret in ("alice", "bob", "gpu-node-017", "10.0.3.22", "team-x", HF):
        assert secret not in text, secret
    ev = out["incidents"][0]["initiator"]["evidence"]
    assert ev[0]["path"] == ev[1]["path"] == "/home/user-1/runs/run7/rank_1.log"
    assert "host-1:469398:469612 [3]" in ev[0]["text"] and "ip-1<56318>" in ev[0]["text"]
    assert "on host-1 as user-1@host-1" in ev[1]["text"] and "/home/user-1/proj/train.py" in ev[1]["text"]
    assert ev[2]["path"] == "/path-1/rank_1.log" and "/path-1/model.pt" in ev[2]["text"]
    assert "/opt/conda/lib/python3.10/site-packages/torch/serialization.py" in ev[2]["text"]  # system paths stay
    assert out["incidents"][0]["root_cause"] == ["Rank 1 reported a NCCL error on host-1 (peer ip-1)."]
    assert out["incidents"][0]["collateral"][0]["evidence"]["path"] == "/home/user-2/rank_0.log"
    # catalog text is not log text: left alone (apart from secrets)
    assert out["incidents"][0]["fix"] == report["incidents"][0]["fix"]
    assert out["incidents"][0]["verify"] == report["incidents"][0]["verify"]
    assert out["notes"] == ["token=[REDACTED:hf-token] seen in /home/user-1/.bashrc"]
    assert redact(report, bundle=True) == out  # deterministic


# ---------------------------------------------------------------------- every output
def _planted_job(root: Path) -> Path:
    logs = root / "job"
    (logs / "node0").mkdir(parents=True)
    (logs / "node0" / "rank_0.log").write_text("".join(f"step {i} | loss 1.0 | grad_norm 1.0\n" for i in range(1, 6)))
    rank1 = "".join(f"step {i} | loss 1.0 | grad_norm 1.0\n" for i in range(1, 4))
    rank1 += "".join(f"[rank1]: RuntimeError: {line.splitlines()[0]}\n" for line, _, _ in PLANTED[:9])
    rank1 += f"[rank1]: RuntimeError: cannot read /home/alice/.cache/huggingface/token on gpu-node-017 (token={HF})\n"
    (logs / "node0" / "rank_1.log").write_text(rank1)
    return logs


SECRETS = sorted({s for _, secrets, _ in PLANTED[:9] for s in secrets})


def _diagnose(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monitor", "diagnose", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_diagnose_outputs_hold_no_secret(tmp_path: Path) -> None:
    logs = _planted_job(tmp_path)
    formats = ["json", "markdown", "text", "html"]
    for fmt in formats:
        out = tmp_path / f"report.{fmt}"
        r = _diagnose(str(logs), "--format", fmt, "--output", str(out))
        if fmt == "html" and r.returncode == 2 and "html" in r.stderr:
            continue  # this build has no HTML renderer
        assert r.returncode == 0, r.stderr
        text = out.read_text()
        for s in SECRETS:
            assert s not in text, (fmt, s)
        assert "[REDACTED:" in text, fmt
    report = json.loads((tmp_path / "report.json").read_text())
    inc = report["incidents"][0]
    assert inc["initiator"]["rank"] == 1 and len(inc["initiator"]["evidence"]) >= 8
    assert "gpu-node-017" in json.dumps(report)  # not a bundle: names stay


@pytest.mark.slow
def test_diagnose_redact_flag_hides_hosts_users_and_paths(tmp_path: Path) -> None:
    logs = _planted_job(tmp_path)
    r = _diagnose(str(logs), "--format", "json", "--redact")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    for s in [*SECRETS, "gpu-node-017", "alice", "10.0.3.17", "10.0.0.5", "store.cluster.internal"]:
        assert s not in text, s
    assert "host-" in text and "user-1" in text and "ip-" in text
    report = json.loads(text)
    assert report["incidents"][0]["initiator"]["rank"] == 1  # the diagnosis itself is unchanged


def test_live_incidents_and_api_report_hold_no_secret() -> None:
    lines = "".join(f"[rank1]: RuntimeError: {line.splitlines()[0]}\n" for line, _, _ in PLANTED[:9]).encode()
    events = default_parser().parse_chunk(lines, 1, FileState("rank_1.log", rank=1))
    eng = LiveEngine("live")
    eng.feed(events, time.time())
    changes = eng.evaluate(time.time())
    assert changes
    published = json.dumps([c.incident for c in changes]) + json.dumps(eng.report())
    for s in SECRETS:
        assert s not in published, s
    assert "[REDACTED:" in published
