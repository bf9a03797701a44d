"""Perplexity spikes: a logged perplexity is e^loss, so a window average whose perplexity
triples (7.5 -> 45) moves its log, the loss the general rules judge, by less than 2x. The
perplexity is judged at the loss's own ratio (3x the median of 3+ earlier values). Every
fixture is a line users pasted into a public issue (its URL beside it)."""

from __future__ import annotations

# a healthy Lua seq2seq run falling from ppl 8226, validation perplexities between epochs (harvardnlp/data2text#9)
from tests.detectors.test_instability import DATA2TEXT
from tests.helpers import engine_verdict, fed_state

# OpenNMT-py: per-50-step cross-entropy jumping between ~2.0 and ~3.8 at a constant lr
# https://github.com/OpenNMT/OpenNMT-py/issues/1025
_ONMT_SPIKES = [
    "[2018-11-01 18:44:26,801 INFO] Step 31150/100000000000; acc:  58.42; ppl:  7.46; xent: 2.01; lr: 0.00030; 12686/437 tok/s;  23345 sec",
    "[2018-11-01 18:45:01,898 INFO] Step 31200/100000000000; acc:  33.19; ppl: 45.57; xent: 3.82; lr: 0.00030; 12352/305 tok/s;  23380 sec",
    "[2018-11-01 18:45:34,106 INFO] Step 31250/100000000000; acc:  60.73; ppl:  8.19; xent: 2.10; lr: 0.00030; 10570/353 tok/s;  23412 sec",
    "[2018-11-01 18:46:09,160 INFO] Step 31300/100000000000; acc:  42.15; ppl: 27.04; xent: 3.30; lr: 0.00030; 9120/556 tok/s;  23447 sec",
    "[2018-11-01 18:46:42,420 INFO] Step 31350/100000000000; acc:  65.47; ppl:  9.08; xent: 2.21; lr: 0.00030; 11366/374 tok/s;  23480 sec",
]
# healthy: OpenNMT-py's perplexity wobbling 19-29 between logging windows
# https://github.com/OpenNMT/OpenNMT-py/issues/431
_ONMT_WOBBLE = [
    "Epoch  2, 52600/733817; acc:  42.20; ppl:  22.37; 998 src tok/s; 1132 tgt tok/s;   6234 s elapsed",
    "Epoch  2, 52650/733817; acc:  43.40; ppl:  21.06; 998 src tok/s; 1132 tgt tok/s;   6239 s elapsed",
    "Epoch  2, 52700/733817; acc:  40.87; ppl:  25.50; 1006 src tok/s; 1126 tgt tok/s;   6245 s elapsed",
    "Epoch  2, 52750/733817; acc:  42.53; ppl:  22.06; 1016 src tok/s; 1121 tgt tok/s;   6251 s elapsed",
    "Epoch  2, 52900/733817; acc:  42.14; ppl:  24.27; 732 src tok/s; 849 tgt tok/s;   6270 s elapsed",
    "Epoch  2, 52950/733817; acc:  44.76; ppl:  19.35; 952 src tok/s; 1124 tgt tok/s;   6275 s elapsed",
    "Epoch  2, 53200/733817; acc:  42.59; ppl:  28.78; 989 src tok/s; 1146 tgt tok/s;   6304 s elapsed",
]
# healthy: transformer-xl's training lines oscillating around ppl 65, an evaluation between them
# https://github.com/kimiyoung/transformer-xl/issues/69
_TXL = [
    "| Eval  12 at step    48000 | time: 5132.39s | valid loss  4.16 | valid ppl    64.240",
    "| epoch   1 step    48200 |  48200 batches | lr 0.000244 | ms/batch 1410.03 | loss  4.13 | ppl    61.889",
    "| epoch   1 step    48400 |  48400 batches | lr 0.000244 | ms/batch 1294.38 | loss  4.14 | ppl    62.738",
    "| epoch   1 step    48600 |  48600 batches | lr 0.000244 | ms/batch 1266.15 | loss  4.17 | ppl    64.460",
    "| epoch   1 step    48800 |  48800 batches | lr 0.000244 | ms/batch 1268.40 | loss  4.18 | ppl    65.431",
    "| epoch   1 step    49000 |  49000 batches | lr 0.000244 | ms/batch 1273.59 | loss  4.19 | ppl    66.287",
]
# healthy: bilm-tf (ELMo) training perplexity around 25, a data shard switch in between
# https://github.com/allenai/bilm-tf/issues/77
_BILM = [
    "Batch 142200, train_perplexity=24.746037",
    "Total time: 585740.8309390545",
    "Batch 142300, train_perplexity=25.46843",
    "Total time: 586129.8147296906",
    "Batch 142400, train_perplexity=25.55357",
    "Loaded 305485 sentences.",
    "Batch 142500, train_perplexity=26.139242",
    "Batch 142600, train_perplexity=24.84199",
    "Batch 142700, train_perplexity=25.43104",
]
# healthy: fairseq's early training, train_inner lines falling fast, a validation summary
# (ppl 118 after training ppl 1278: another series) between them
# https://github.com/facebookresearch/fairseq/issues/940
_FAIRSEQ_EARLY = [
    "| epoch 001:    450 / 1891 loss=11.521, nll_loss=10.881, ppl=1886.05, wps=52922, ups=0.5, wpb=104928, bsz=5325, num_updates=445, lr=8.90889e-05, gnorm=1.543, clip=0%, oom=0, loss_scale=2.000, wall=882, train_wall=756",
    "| epoch 001:    500 / 1891 loss=11.346, nll_loss=10.678, ppl=1637.83, wps=53351, ups=0.5, wpb=104872, bsz=5322, num_updates=495, lr=9.90876e-05, gnorm=1.507, clip=0%, oom=0, loss_scale=2.000, wall=973, train_wall=840",
    "| epoch 001:    550 / 1891 loss=11.186, nll_loss=10.492, ppl=1440.01, wps=53627, ups=0.5, wpb=104800, bsz=5311, num_updates=545, lr=0.000109086, gnorm=1.469, clip=0%, oom=0, loss_scale=2.000, wall=1065, train_wall=925",
    "| epoch 001:    600 / 1891 loss=11.039, nll_loss=10.320, ppl=1278.29, wps=53936, ups=0.5, wpb=104812, bsz=5310, num_updates=595, lr=0.000119085, gnorm=1.445, clip=0%, oom=0, loss_scale=2.000, wall=1156, train_wall=1010",
    "| epoch 001 | valid on 'valid' subset | valid_loss 8.11425 | valid_nll_loss 6.8834 | valid_ppl 118.06 | num_updates 600",
    "| epoch 001:    650 / 1891 loss=10.902, nll_loss=10.160, ppl=1144.39, wps=53573, ups=0.5, wpb=104904, bsz=5328, num_updates=645, lr=0.000129084, gnorm=1.419, clip=0%, oom=0, loss_scale=2.000, wall=1263, train_wall=1094",
]
# healthy: fairseq epoch summaries and validation summaries interleaved (valid ppl 37.6 beside
# training ppl 33.9: the validation lines are their own series)
# https://github.com/facebookresearch/fairseq/issues/514
_FAIRSEQ_EPOCHS = [
    "| epoch 008 | loss 6.326 | nll_loss 5.193 | ppl 36.58 | wps 12876 | ups 4.9 | wpb 2578 | bsz 108 | num_updates 21896 | lr 0.000213706 | gnorm 1.201 | clip 0% | oom 0 | wall 4634 | train_wall 4309",
    "| epoch 008 | valid on 'valid' subset | valid_loss 6.43844 | valid_nll_loss 5.23288 | valid_ppl 37.61 | num_updates 21896 | best 6.43844",
    "| epoch 009:   1000 / 2737 loss=6.220, nll_loss=5.070, ppl=33.60, wps=12800, ups=4.7, wpb=2568, bsz=108, num_updates=22897, lr=0.000208983, gnorm=1.242, clip=0%, oom=0, wall=4847, train_wall=4501",
    "| epoch 009:   2000 / 2737 loss=6.234, nll_loss=5.086, ppl=33.96, wps=12811, ups=4.8, wpb=2571, bsz=108, num_updates=23897, lr=0.000204564, gnorm=1.242, clip=0%, oom=0, wall=5048, train_wall=4693",
    "| epoch 009 | loss 6.233 | nll_loss 5.085 | ppl 33.94 | wps 12857 | ups 4.9 | wpb 2578 | bsz 108 | num_updates 24633 | lr 0.000201484 | gnorm 1.241 | clip 0% | oom 0 | wall 5195 | train_wall 4834",
    "| epoch 009 | valid on 'valid' subset | valid_loss 6.37204 | valid_nll_loss 5.14732 | valid_ppl 35.44 | num_updates 24633 | best 6.37204",
    "| epoch 010:   1000 / 2737 loss=6.144, nll_loss=4.982, ppl=31.61, wps=12673, ups=4.7, wpb=2534, bsz=106, num_updates=25634, lr=0.000197511, gnorm=1.279, clip=0%, oom=0, wall=5408, train_wall=5026",
]


def _failures(lines: list[str]) -> list[str]:
    return [i.failure for i in engine_verdict(lines)]


def test_perplexity_spike_over_earlier_windows() -> None:
    inc = engine_verdict(_ONMT_SPIKES)
    assert [i.failure for i in inc] == ["loss_spike"]
    # 27.04 is 3.3x the median (8.19) of the three windows before it; the first jump (45.57
    # after 7.46) has one window behind it, too few to judge
    assert inc[0].evidence[0].line == 4


def test_the_loss_alone_does_not_see_it() -> None:
    # the same windows without their perplexity: xent 2.10 -> 3.30 is not a tripled loss
    bare = [line.replace(line.split(";")[2] + ";", "") for line in _ONMT_SPIKES]
    st = fed_state(bare)
    assert all("ppl" not in r.data for rs in st.ranks.values() for r in rs.samples)
    assert _failures(bare) == []


def test_healthy_perplexity_series_stay_quiet() -> None:
    for lines in (_ONMT_WOBBLE, _TXL, _BILM, _FAIRSEQ_EARLY, _FAIRSEQ_EPOCHS, DATA2TEXT):
        assert _failures(lines) == [], lines[0]


def test_fairseq_validation_summary_is_its_own_series() -> None:
    st = fed_state(_FAIRSEQ_EPOCHS)
    data = [r.data for rs in st.ranks.values() for r in rs.samples]
    evals = [d for d in data if "eval_loss" in d]
    assert {d["eval_loss"] for d in evals} == {6.43844, 6.37204}  # (its perf reading repeats it)
    assert not any("ppl" in d or "loss" in d for d in evals)


def test_fairseq_plain_keyed_validation_summary_is_an_eval() -> None:
    # fairseq after 0.9 writes the validation summary with plain "loss"/"ppl" keys: only its
    # "valid on 'valid' subset" tells it from the training summary above it (train ppl 4.61,
    # valid ppl 272: one series they would be a 59x jump)
    # https://github.com/facebookresearch/fairseq/issues/1529
    lines = [
        "| epoch 028 | loss 3.976 | nll_loss 2.204 | ppl 4.61 | wps 279460 | ups 3 | wpb 110529.673 | bsz 3780.211 | num_updates 9165 | lr 0.000330319 | gnorm 0.635 | clip 0.000 | oom 0.000 | loss_scale 0.000 | wall 4043 | train_wall 3606",
        "| epoch 028 | valid on 'valid' subset | loss 9.329 | nll_loss 8.088 | ppl 272.04 | num_updates 9165 | best_loss 9.11817",
    ]
    data = [r.data for rs in fed_state(lines).ranks.values() for r in rs.samples]
    assert data[0]["loss"] == 3.976 and data[0]["ppl"] == 4.61
    assert [d.get("eval_loss") for d in data[1:]][:1] == [9.329] and not any("ppl" in d for d in data[1:])


def test_a_perplexity_that_is_not_the_loss_is_not_judged() -> None:
    # a VQ model's codebook "perplexity" grows as more codes are used, beside a falling loss
    # (it is not e^loss; https://github.com/Doubiiu/CodeTalker/issues/51 explains the metric);
    # the OpenNMT lines above with their xent made inconsistent with their ppl stay quiet too
    lines = [line.replace(line.split(";")[3], " xent: 0.30") for line in _ONMT_SPIKES]
    assert all("xent: 0.30;" in line for line in lines)
    assert _failures(lines) == []
