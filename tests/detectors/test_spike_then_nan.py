"""A finite explosion that runs into NaN is the NaN's cause; a one-step blip the loss came back
from is not, and the NaN that comes later is an event of its own. Real lines from HiFi-GAN's
trainer (jik876/hifi-gan#143: 'Gen Loss Total' spikes to 6.5e7 at step 30, is back at 200 by
step 35, then NaN from step 40)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_HIFIGAN = [
    "checkpoints directory :  cp_hifigan",
    "Epoch: 1",
    "Steps : 0, Gen Loss Total : 101.349, Mel-Spec. Error : 2.058, s/b : 585.139",
    "Steps : 5, Gen Loss Total : 135.118, Mel-Spec. Error : 2.176, s/b : 0.496",
    "Steps : 10, Gen Loss Total : 106.757, Mel-Spec. Error : 1.938, s/b : 0.435",
    "Steps : 15, Gen Loss Total : 94.055, Mel-Spec. Error : 1.701, s/b : 0.435",
    "Steps : 20, Gen Loss Total : 141.385, Mel-Spec. Error : 1.857, s/b : 0.433",
    "Steps : 25, Gen Loss Total : 196.452, Mel-Spec. Error : 3.813, s/b : 0.443",
    "Steps : 30, Gen Loss Total : 64922832.000, Mel-Spec. Error : 1.813, s/b : 0.454",
    "Steps : 35, Gen Loss Total : 199.692, Mel-Spec. Error : 3.854, s/b : 0.455",
    "Steps : 40, Gen Loss Total :  nan, Mel-Spec. Error : 2.021, s/b : 0.443",
    "Steps : 45, Gen Loss Total :  nan, Mel-Spec. Error :  nan, s/b : 0.449",
]


def test_a_nan_after_the_loss_came_back_is_its_own_event() -> None:
    assert [i.failure for i in engine_verdict(_HIFIGAN)][:1] == ["nonfinite_loss"]


def test_a_spike_running_into_nan_is_the_cause() -> None:
    # step 35's recovery removed (line dropped): the explosion runs straight into the NaN
    lines = [x for x in _HIFIGAN if not x.startswith("Steps : 35,")]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["loss_spike"]


def test_the_total_loss_key_with_a_word_before_it_is_read() -> None:
    # 'Gen Loss Total' (a GAN's generator total): the metric line is read at all
    assert engine_verdict(_HIFIGAN[:8]) == []
    assert engine_verdict([*_HIFIGAN[:8], _HIFIGAN[10]]) != []
