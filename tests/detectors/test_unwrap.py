"""Hard-wrapped pastes (corpus dist-064: 120 columns; dist-068: 170 columns) are rejoined."""

from __future__ import annotations

from detectors.unwrap import unwrap, wrap_width

LOGICAL = [
    "[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL's "
    "watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates "
    "a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog.",
    "[rank6]:[E429 13:55:49.384620373 ProcessGroupNCCL.cpp:1533] [PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL "
    "preparing to dump debug info. Include stack trace: 1",
    "short line",
    "[rank7]:[E430 05:09:48.083703086 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 7] Received a dump signal "
    "due to a collective timeout from this local rank and we will try our best to dump the debug info.",
]


def wrapped(width: int) -> bytes:
    out = []
    for line in LOGICAL:
        parts = [line[i:i + width] for i in range(0, len(line), width)]
        parts[-1] = parts[-1].ljust(width) if len(parts) > 1 else parts[-1]  # a terminal pads the last row
        out += parts
    return "\n".join(out).encode()


def test_rejoins_a_terminal_wrap_and_keeps_line_numbers() -> None:
    data = wrapped(120)
    assert wrap_width(data.split(b"\n")) == 120
    lines = unwrap(data).decode().split("\n")
    assert len(lines) == len(data.split(b"\n"))  # every physical line keeps its number
    joined = [ln for ln in lines if ln]
    assert joined == LOGICAL
    assert lines[0] == LOGICAL[0]


def test_ordinary_logs_are_left_alone() -> None:
    text = "\n".join(f"step {i} | loss {2 - i / 100:.4f} | grad_norm {1 + i / 7:.3f}" for i in range(200)).encode()
    assert unwrap(text) == text
    nccl = "\n".join(f"node1:123:456 [0] NCCL INFO Channel {i:02d}/32 :    0   1   2   3   4   5   6   7   8   9  10  11"
                     for i in range(32)).encode()
    assert unwrap(nccl) == nccl


def test_records_of_equal_length_are_not_wraps() -> None:
    """Megatron lines that happen to share a length (corpus dist-033) and excerpts cut at a
    fixed width keep their lines: the next line starts a new record, not the rest of this one."""
    meg = "\n".join(
        f" iteration      {i}/  250000 | consumed samples:       {186368 + 1024 * i:>6} | lm loss: 2.38264{i % 10}E+00 | "
        f"loss scale: 1.0 | grad norm: 0.2{i % 10}7 | number of skipped iterations:   0 | number of nan iterations:   0 |"
        for i in range(182, 190)).encode()
    assert unwrap(meg) == meg
    cut = "\n".join(f"[rank{r}]:[E626 06:24:44.90388 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
                    f"operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=98"[:120] for r in range(8)).encode()
    assert unwrap(cut) == cut


def test_the_same_record_every_step_is_not_a_wrap_width() -> None:
    """DeepSpeed's log_dist line, the longest of the excerpt and of equal length every step, each
    followed by a pipeline-engine line starting in lower case (corpus holdout5 h5-032)."""
    lines = []
    for s in range(16, 24):
        lines.append(f"[2026-07-30 09:16:{s + 13:02d},681] [INFO] [logging.py:123:log_dist] [Rank 0] step={s}, skipped=0, "
                     "lr=[1e-06], mom=[0.0]")
        lines.append(f"steps: {s} loss: {'nan' if s >= 18 else '0.5994'} iter time (s): 3.235 samples/sec: 0.309")
    data = "\n".join(lines).encode()
    assert wrap_width(data.split(b"\n")) is None
    assert unwrap(data) == data


def _ids(lines: list[bytes]) -> list[frozenset[int]]:
    from detectors.parse import default_parser

    return default_parser().fingerprint_ids(lines)


def test_markdown_emphasis_is_dropped_where_it_hides_a_fingerprint() -> None:
    from detectors.unwrap import unmark

    # a reporter bolded the exception (facebookresearch/detectron2#1563, the round-7 sealed set's h7b-028)
    text = (b"**ERROR [06/09 11:05:25 d2.engine.train_loop]**: Exception during training:\n"
            b"**RuntimeError: CUDA out of memory.** Tried to allocate 1.71 GiB (GPU 0; 31.72 GiB total capacity; "
            b"23.58 GiB already allocated; 1.58 GiB free; 29.08 GiB reserved in total by PyTorch)\n"
            b"scale = 2**16 and **kwargs stay\n")
    out = unmark(text, _ids).split(b"\n")
    assert out[1].startswith(b"RuntimeError: CUDA out of memory. Tried to allocate 1.71 GiB")
    assert out[0] == text.split(b"\n")[0]  # nothing to gain there: left as pasted
    assert out[2] == b"scale = 2**16 and **kwargs stay"
    assert unmark(b"no marks at all\n", _ids) == b"no marks at all\n"


def test_fixed_width_metric_lines_with_padded_numbers_are_not_wraps() -> None:
    """A loop's fixed-width line every 25 steps (``step   25 | loss 14.9655 | grad_norm (pre-clip)
    8.474 | ...``): every line the same length, the step counter padded to its width, each next line
    a record of its own (corpus holdout33 g33e-013; read as one wrapped line, 25 of its 26 metric
    lines were lost)."""
    norms = [8.474, 6.737, 7.199, 7.63, 8.103, 10.297, 15.818, 18.362, 20.14, 30.425, 28.607, 31.706, 143.582]
    text = "\n".join(f"step {25 * (i + 1):4d} | loss {14.9655 - i / 3:7.4f} | grad_norm (pre-clip) {g:12.3f} | "
                     f"max {2 * g:9.3f} | clip_coef {1 / g:.4f}" for i, g in enumerate(norms)).encode()
    assert unwrap(text) == text
