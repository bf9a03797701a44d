"""Open MPI's ``--tag-output`` tag (``[jobid,rank]<stderr>:``) behind a log shipper's or a job
platform's own label: the rank is still the tag's. Real lines from two platforms."""

from __future__ import annotations

from detectors.diagnosis import build_report
from detectors.prefixes import split_prefixes
from tests.helpers import fed_state


def test_a_shipper_timestamp_before_the_tag() -> None:
    # https://github.com/facebookresearch/deit/issues/76 (a cloud job's log: "ISO time: " before the tag)
    pre = split_prefixes("2021-03-10T13:22:37.443Z: [1,0]<stderr>:OSError: Caught OSError in DataLoader worker process 3.")
    assert pre.rank == 0
    assert pre.body.startswith("OSError: Caught OSError")


def test_a_platform_label_before_the_tag() -> None:
    # https://github.com/spellml/examples/pull/17 (Spell's run log, horovodrun under Open MPI)
    pre = split_prefixes("May 18, 2020, 11:47:18: running: [1,1]<stdout>:Train Epoch: 10 [8320/30000 (28%)]\tLoss: 0.194643")
    assert pre.rank == 1
    assert pre.body.startswith("Train Epoch: 10")


def test_the_tagged_rank_s_crash_is_named() -> None:
    # deit#76's traceback end (rank 0's DataLoader worker raised; lines from the thread)
    lines = [
        '2021-03-10T13:22:37.443Z: [1,0]<stderr>:  File "/opt/conda/lib/python3.6/site-packages/torch/_utils.py", line 428, in reraise',
        "2021-03-10T13:22:37.443Z: [1,0]<stderr>:    raise self.exc_type(msg)",
        "2021-03-10T13:22:37.443Z: [1,0]<stderr>:OSError: Caught OSError in DataLoader worker process 3.",
        "2021-03-10T13:22:37.443Z: [1,0]<stderr>:Original Traceback (most recent call last):",
    ]
    top = build_report(fed_state(lines, "job.log"))["incidents"][0]
    assert top["initiator"]["rank"] == 0


def test_an_error_message_is_never_taken_for_a_label() -> None:
    # a line whose text before a tag-like token is an error keeps its words (the label rule's guard)
    pre = split_prefixes("RuntimeError: bad rank [1,0]<stderr>: x")
    assert pre.rank is None
