"""A detector trainer's progress table (ultralytics YOLOv3/v5/v7/v8 and their forks).

The header names the columns once per epoch ("Epoch gpu_mem box obj cls total labels img_size",
later "Epoch GPU_mem box_loss obj_loss cls_loss Instances Size"); each row is the description of a
tqdm bar: "e/E", the memory with its unit, the loss parts (running means), counts, then the bar.
The loss parts add up to the loss ("total" when printed); a NaN part is a NaN loss.
"""

from __future__ import annotations

import math

from detectors.model import EventKind
from tests.helpers import engine_verdict

# https://github.com/WongKinYiu/yolov7/issues/849 (the previous epoch's "all" row sits between header and row)
YOLOV7 = [
    "     Epoch   gpu_mem       box       obj       cls     total    labels  img_size",
    "                 all         787        2054       0.736      0.0185     0.00493     0.00334",
    "   32/4999     55.1G   0.05461   0.01017   0.03715    0.1019        26      1856: 100%|██████████| 295/295 [12:51<00:00,  2.62s/it]",
    "               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95: 100%|██████████| 50/50 [01:15<00:00,  1.52s/it]",
    "",
    "     Epoch   gpu_mem       box       obj       cls     total    labels  img_size",
    "                 all         787        2054       0.874     0.00923     0.00909     0.00684",
    "   33/4999     70.1G   0.05069   0.01035   0.03706    0.0981        14      1856: 100%|██████████| 295/295 [12:39<00:00,  2.57s/it]",
    "               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95: 100%|██████████| 50/50 [01:10<00:00,  1.42s/it]",
]
# https://github.com/ultralytics/yolov5/pull/10314 (YOLOv5 v7.0 column names, no "total")
YOLOV5_V7 = [
    "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size",
    "        0/1      22.4G    0.07281    0.08384    0.06359        199        640: 100%|██████████| 1849/1849 13:15",
]
# https://github.com/ultralytics/yolov5/issues/2965: a bar still running
YOLOV5_RUNNING = [
    " Epoch   gpu_mem       box       obj       cls     total    labels  img_size",
    "     0/299      5.2G      0.11    0.1612   0.03867    0.3099        28      1280:   1%|▌        | 1/78 [00:04<05:27,  4.26s/it]",
]


def _events(lines: list[str]) -> list:  # the parser's own events, one file
    from detectors.parse import default_parser
    from detectors.parsers.base import FileState, JobParseState

    fs = FileState("train.log", year=2026, job=JobParseState())
    parser = default_parser()
    return [ev for i, line in enumerate(lines, 1) for ev in parser.parse_line(line, i, fs)]


def _loss_rows(lines: list[str]) -> list[tuple[float, float]]:
    return [(float(e.data["epoch"]), float(e.data["loss"])) for e in _events(lines) if e.kind is EventKind.SAMPLE]


def test_the_total_column_is_the_loss_and_the_epoch_its_count() -> None:
    assert _loss_rows(YOLOV7) == [(32.0, 0.1019), (33.0, 0.0981)]
    assert _loss_rows(YOLOV5_RUNNING) == [(0.0, 0.3099)]


def test_without_a_total_the_parts_add_up() -> None:
    [(epoch, loss)] = _loss_rows(YOLOV5_V7)
    assert epoch == 0.0 and math.isclose(loss, 0.07281 + 0.08384 + 0.06359)


def test_a_nan_part_is_a_nan_loss() -> None:
    row = "      1/99      2.64G        nan    0.02545    0.01993        78        640: 100%|██████████| 8/8 [00:05<00:00,  1.48it/s]"
    [(_, loss)] = _loss_rows([*YOLOV5_V7[:1], row])
    assert math.isnan(loss)
    top = engine_verdict([*YOLOV5_V7[:1], row])[0]
    assert top.failure == "nonfinite_loss"


def test_a_healthy_table_raises_nothing() -> None:
    assert [i for i in engine_verdict(YOLOV7 + YOLOV5_RUNNING) if i.severity != "info"] == []


def test_rows_without_their_header_are_read_by_their_layout() -> None:
    # an excerpt of rows far from (or without) their header: every version prints the epoch, the
    # memory, the loss parts, then the first whole number (labels / instances)
    far = [YOLOV5_V7[0], *[""] * 12, YOLOV5_V7[1]]
    [(epoch, loss)] = _loss_rows(far)
    assert epoch == 0.0 and math.isclose(loss, 0.07281 + 0.08384 + 0.06359)
    other = ["               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95", YOLOV5_V7[1]]
    assert len(_loss_rows(other)) == 1
    # YOLOv7's rows as a user pasted them without the header (corpus holdout12 h12a-002)
    rows = ["     5/149     13.5G   0.04284  0.004414  0.009558   0.05681        12       640  0.008163  0.009744"
            "  0.001057 0.0003038   0.08286  0.009637   0.02632",
            "     6/149     13.5G       nan       nan       nan       nan         3       640         0         0"
            "         0         0       nan       nan       nan"]
    assert [i.failure for i in engine_verdict(rows)][:1] == ["nonfinite_loss"]


def test_a_row_whose_layout_does_not_tell_is_not_read() -> None:
    # one decimal before the count, or no count at all: which cells are losses is not known
    assert _loss_rows(["     6/149     13.5G   0.0428        12       640: 100%|███| 8/8"]) == []
    assert _loss_rows(["     6/149     13.5G   0.0428   0.0044   0.0095"]) == []


def test_a_total_column_without_its_header_is_the_loss_not_one_more_part() -> None:
    # YOLOv5 results rows pasted without a header (corpus holdout12 h12a-020, holdout24 h24a-010):
    # box, obj, cls, then their total; YOLOv7's the same (corpus holdout12 h12a-002)
    v5 = "    37/4999     9.48G    0.0309   0.01598  0.007565   0.05444       526       640    0.5973     0.985"
    v7 = "     5/149     13.5G   0.04284  0.004414  0.009558   0.05681        12       640  0.008163  0.009744"
    assert _loss_rows([v5, v7]) == [(37.0, 0.05444), (5.0, 0.05681)]
    # no cell adds up the ones before it: the parts up to the first whole number, as before
    assert _loss_rows([YOLOV5_V7[1]]) == [(0.0, 0.07281 + 0.08384 + 0.06359)]


def test_the_first_yolov3_rows_are_read_by_their_total() -> None:
    # https://github.com/ultralytics/yolov3/issues/95 ("Epoch Batch x y w h conf cls total nTargets
    # time", "%10.3g" cells: the total prints as a whole number) and the same layout in corpus
    # holdout17 h17-014; ultralytics/yolov3#228 names the columns of the "xy wh" version
    rows = ["    0/99      0/7328      1.41      1.33       6.3      8.07       734      17.5       769       121      4.19",
            "    0/99      97/249     0.834     0.843       113        92      26.5      15.7       249        76      1.59"]
    assert _loss_rows(rows) == [(0.0, 769.0), (0.0, 249.0)]
    # a batch cell where the memory is, but no cell is the sum of the ones before it: not read
    assert _loss_rows(["    0/99      0/7328      1.41      1.33       6.3       121      4.19"]) == []


# corpus holdout17 h17-014: the first ultralytics/yolov3 layout, each row the running mean of the
# epoch's batch losses so far ("# Running epoch-means of tracked metrics" in that train.py and its
# forks: mloss = (mloss * i + loss) / (i + 1))
_YOLOV3_JUMP = [
    "    0/99      93/249     0.831     0.841      36.4      34.7      26.8      15.6       115        46      1.22",
    "    0/99      94/249     0.826     0.836        36      34.4      26.6      15.6       114        18      1.57",
    "    0/99      95/249     0.823     0.835      35.7      34.1      26.4      15.5       113        34      1.43",
    "    0/99      96/249     0.821     0.833      35.4      33.8      26.2      15.5       113        31      1.48",
    "    0/99      97/249     0.834     0.843       113        92      26.5      15.7       249        76      1.59",
    "    0/99      98/249     0.833     0.842       115      94.2      26.5      15.6       253        39      1.83",
]


def test_a_running_epoch_mean_that_doubles_in_one_batch_is_a_batch_far_past_the_epochs_loss() -> None:
    # 113 → 249 at batch 97: that batch's loss was 98 * 249 - 97 * 113 = 13 441 (at the least 13 343
    # with the rounding of the printed means), 118 times the epoch's mean before it
    batch = next(e for e in _events(_YOLOV3_JUMP) if e.kind is EventKind.SAMPLE and e.data["epoch_iter"] == 97.0)
    assert batch.data["batches_low"] == 13343.5 and batch.data["mean_before"] == 113.0
    top = engine_verdict(_YOLOV3_JUMP)[0]
    assert (top.failure, top.severity, top.step) == ("loss_spike", "warning", None)
    assert "97/249" in top.evidence[0].text
    # the rows before it move within their rounding: nothing
    assert [i for i in engine_verdict(_YOLOV3_JUMP[:4]) if i.severity != "info"] == []
    # rows of another epoch, or a batch counter that went back, pair with no earlier mean
    other = [_YOLOV3_JUMP[3].replace("0/99", "1/99", 1), _YOLOV3_JUMP[4]]
    back = [_YOLOV3_JUMP[3], _YOLOV3_JUMP[4].replace("97/249", "9/249")]
    for rows in (other, back):
        assert all("batches_low" not in e.data for e in _events(rows) if e.kind is EventKind.SAMPLE)
    # rows that no running mean can give (115 at batch 93, then 50 at batch 94: a batch of -6060)
    # print each batch's own loss: the file's rows are not paired from then on
    own = [_YOLOV3_JUMP[0],
           "    0/99      94/249       0.4       0.4        20        19         7       3.2        50        18      1.57",
           *_YOLOV3_JUMP[2:]]
    assert [e.data["loss"] for e in _events(own[:2])] == [115.0, 50.0]
    assert all("batches_low" not in e.data for e in _events(own)[2:] if e.kind is EventKind.SAMPLE)
    assert [i for i in engine_verdict(own) if i.severity != "info"] == []
