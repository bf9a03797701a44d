"""The engine snapshot (``monitor.snapshot``): real engine states from the golden torchrun
logs survive dump → JSON → load with the same verdict; hostile snapshots are refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from detectors.detect import JobState
from detectors.diagnosis import build_report
from detectors.events import Event, EventKind, Source
from detectors.parsers.base import FileState, JobParseState
from monitor import snapshot
from monitor.diagnose import diagnose_paths
from monitor.live import LiveEngine
from tests.conftest import REPO

GOLDEN = sorted((REPO / "tests" / "e2e" / "golden").glob("*/logs"))


def _roundtrip(obj: object) -> object:
    return snapshot.load(json.loads(json.dumps(snapshot.dump(obj), allow_nan=False)))


def _plain(obj: object) -> object:
    """A comparable form: the snapshot of the snapshot must be the snapshot."""
    return snapshot.dump(obj)


@pytest.mark.parametrize("logs", GOLDEN, ids=lambda p: p.parent.name)
def test_engine_state_from_golden_logs_roundtrips(logs: Path) -> None:
    state = diagnose_paths([str(logs)], job="golden").state
    assert isinstance(state, JobState)
    back = _roundtrip(state)
    assert isinstance(back, JobState)
    assert _plain(back) == _plain(state)
    assert build_report(back) == build_report(state)


def test_live_engine_roundtrips_with_its_published_incidents() -> None:
    logs = REPO / "tests" / "e2e" / "golden" / "exception-perrank" / "logs"
    res = diagnose_paths([str(logs)], job="golden")
    eng = LiveEngine("golden")
    eng.state = res.state
    eng.evaluate(1000.0)
    back = _roundtrip(eng)
    assert isinstance(back, LiveEngine) and back.published.keys() == eng.published.keys()
    assert back.report() == eng.report() and back.catalog is eng.catalog


def test_non_finite_floats_tuple_keys_and_shared_parse_state() -> None:
    fs = FileState(path="rank_0.log", rank=0, job=JobParseState({("host-1", 42): 3}))
    back = _roundtrip({"f": fs, "x": [math.nan, math.inf, -math.inf, (1, "a")], (3, "k"): {1, 2}})
    assert isinstance(back, dict)
    assert back["f"] == fs and back[(3, "k")] == {1, 2}
    nan, inf, ninf, tup = back["x"]
    assert math.isnan(nan) and inf == math.inf and ninf == -math.inf and tup == (1, "a")


def test_attack_secrets_in_log_lines_never_reach_the_snapshot() -> None:
    secret = "hf_" + "Zq9" * 12
    st = JobState(job="j")
    st.add(Event(EventKind.MATCH, Source("rank_0.log", 1, f"RuntimeError: token={secret} CUDA out of memory"),
                 rank=0, failure="cuda_oom", data={"message": f"Authorization: Bearer {secret}"}))
    text = json.dumps(snapshot.dump(st))
    assert secret not in text and "[REDACTED" in text


def test_a_files_look_back_bytes_roundtrip_and_hold_no_secret() -> None:
    """The parser keeps a file's last bytes (``FileState.tail``) to read the lines before a
    collective mismatch; any bytes come back as they were, a secret among them redacted."""
    raw = bytes(range(256)) + b"\nNCCL INFO cudaDriverVersion 12040\n\xe2\x96\x88 bar\n"
    fs = FileState(path="rank_1.log", rank=1, tail=raw)
    back = _roundtrip(fs)
    assert isinstance(back, FileState) and back.tail == raw and back == fs
    secret = "hf_" + "Zq9" * 12
    fs.tail = f"export HF_TOKEN={secret}\n".encode()
    text = json.dumps(snapshot.dump(fs))
    assert secret not in text and "[REDACTED" in text


@pytest.mark.parametrize("bad", [
    {"$obj": "os:system", "fields": {}},
    {"$obj": "subprocess:Popen", "fields": {"args": "touch /tmp/pwned"}},
    {"$obj": "detectors.detect:JobState.__init__", "fields": {}},
    {"$enum": "builtins:object", "value": 1},
    {"$obj": "detectors.events:Source", "fields": {"path": "p", "line": "not a number", "text": "t"}},
    {"$obj": "detectors.events:Source", "fields": {"path": "p", "line": 1, "text": "t", "evil": 1}},
    {"$obj": "detectors.detect:JobState", "fields": {"order": "many"}},
    {"$obj": "detectors.detect:JobState", "fields": {"no_such_attribute": 1}},
    {"$dict": [[{"$dict": []}, 1]]},
    {"$float": "1e999x"},
    {"$bytes": "\u0100"},
    {"$obj": "detectors.parsers.base:FileState", "fields": {"path": "p", "tail": "not bytes"}},
    {"$deque": [], "maxlen": -1},
    {"unknown": 1},
    {"$rec": [1, 2, None, "p", "not a line number", "t", {"$kv": {}}]},
    {"$rec": [1, 2, None, "p", 3, "t"]},
    {"$rec": ["step", 2, None, "p", 3, "t", {"$kv": {}}]},
    {"$kv": {"k": {"$obj": "os:system", "fields": {}}}},
], ids=lambda b: json.dumps(b)[:40])
def test_attack_crafted_snapshot_is_refused_not_executed(bad: object) -> None:
    with pytest.raises(snapshot.SnapshotError):
        snapshot.load(bad)


def test_a_field_missing_from_an_old_snapshot_takes_its_default() -> None:
    data = snapshot.dump(FileState(path="rank_0.log"))
    assert isinstance(data, dict)
    del data["fields"]["progress"]
    back = snapshot.load(data)
    assert isinstance(back, FileState) and back.progress is None and back.path == "rank_0.log"


def test_live_engine_is_one_engine_and_a_snapshot_from_before_it_wrapped_one_still_loads() -> None:
    """The live engine's state is its ``Engine``'s (saved once); a checkpoint written when the
    live engine held a bare ``JobState`` (no ``core``) is rebuilt around that state."""
    logs = REPO / "tests" / "e2e" / "golden" / "exception-perrank" / "logs"
    eng = LiveEngine("golden")
    eng.state = diagnose_paths([str(logs)], job="golden").state
    assert eng.core.state is eng.state and eng.core.verdict()
    eng.evaluate(1000.0)
    data = snapshot.dump(eng)
    assert isinstance(data, dict) and "state" not in data["fields"]
    old = json.loads(json.dumps(data))
    old["fields"]["state"] = old["fields"].pop("core")["fields"]["state"]  # the layout before Engine
    for raw in (data, old):
        back = snapshot.load(raw)
        assert isinstance(back, LiveEngine) and back.core.state is back.state
        assert back.report() == eng.report() and back.published.keys() == eng.published.keys()


def test_metric_samples_are_written_compactly_and_read_back_the_same() -> None:
    """A large job's state is mostly metric samples: each is one ``$rec`` list and its data one
    ``$kv`` object, not three objects with field names; the older ``$obj`` form still loads."""
    from detectors.model import SampleRec

    secret = "hf_" + "Zq9" * 12
    rec = SampleRec(7, 12, 1.7e9, Source("rank_3.log", 41, f"step 7 | loss nan | token={secret}"),
                    {"loss": math.nan, "grad_norm": 0.8, "scope": "local", "tags": ("a", 1)})
    data = snapshot.dump(rec)
    assert isinstance(data, dict) and set(data) == {"$rec"}
    assert secret not in json.dumps(data)
    back = snapshot.load(json.loads(json.dumps(data)))
    assert isinstance(back, SampleRec) and (back.step, back.order, back.time) == (7, 12, 1.7e9)
    assert back.source.path == "rank_3.log" and back.source.line == 41 and "[REDACTED" in back.source.text
    assert math.isnan(back.data["loss"]) and back.data["grad_norm"] == 0.8 and back.data["tags"] == ("a", 1)
    old_form = {"$obj": "detectors.model:SampleRec", "fields": {
        "step": 7, "order": 12, "time": None, "data": {"$dict": [["loss", 1.5]]},
        "source": {"$obj": "detectors.model:Source", "fields": {"path": "r.log", "line": 1, "text": "t"}}}}
    old = snapshot.load(old_form)
    assert isinstance(old, SampleRec) and old.data == {"loss": 1.5} and old.source.text == "t"
