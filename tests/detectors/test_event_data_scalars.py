"""Every event's data is scalars: events travel between nodes as MQTT payloads, whose ``data`` holds
strings, numbers, booleans and nulls only (``monitor.mqtt.EventPayload``; anything else arrives
as its ``str()``). A list in an event's data (a traceback's frames, a fingerprint's exit codes)
reached the aggregator as a string and stopped its reader (a 3-node integration test found it).
Checked over every real log in the corpus, and on the correlator's side: data that arrives as a
string it cannot read is skipped, never a crash."""

from __future__ import annotations

from pathlib import Path

from detectors.engine import Engine
from detectors.stacks import decode_frames, encode_frames
from tests.helpers import engine_verdict

_CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_every_events_data_is_scalars_over_the_real_corpora() -> None:
    bad: list[str] = []
    for path in sorted(_CORPUS.glob("*/*/combined.log")):
        engine = Engine("t")
        for ev in engine.feed(path.read_bytes(), 1, engine.open_file("train.log")):
            for k, v in ev.data.items():
                if not (v is None or isinstance(v, str | int | float | bool)):
                    bad.append(f"{path.parent.name}: {ev.kind.name} data.{k} = {type(v).__name__}")
    assert bad[:20] == []


def test_frames_round_trip_as_one_string() -> None:
    frames = [("_engine_run_backward", "/opt/venv/lib/python3.11/site-packages/torch/autograd/graph.py", 979),
              ("<module>", "/home/user/train.py", 31)]
    got = decode_frames(encode_frames(frames))
    assert [(f.function, f.file, f.line) for f in got] == [
        ("_engine_run_backward", "torch/autograd/graph.py", 979), ("<module>", "/home/user/train.py", 31)]


def test_frames_another_node_sent_in_a_shape_no_one_reads_are_skipped() -> None:
    assert decode_frames("[['a', 'b', 1]]") == ()
    assert decode_frames(["a", "b", 1]) == ()


def test_a_timeout_whose_frames_came_as_an_old_list_string_is_no_crash() -> None:
    # the shape the aggregator received before: str() of a list, not encode_frames
    lines = [f"[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
             "Timed out waiting 20000ms for recv operation to complete" for r in (0, 1, 2)]
    assert engine_verdict(lines)[0].failure == "collective_timeout"
