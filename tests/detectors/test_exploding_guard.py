"""The divergence guards of Karpathy's char-rnn, neuraltalk and neuraltalk2 (and the many projects
built on them) stop a run whose finite loss blew past a multiple of its first value, saying so:
``loss is exploding, aborting.``, ``loss seems to be exploding, quitting.``, ``Aboring, cost seems
to be exploding. Run gradcheck? Lower the learning rate?``. That is a loss spike, not a NaN and not
a crash. (The lines around them are the shapes those trainers print.)"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_CHAR_RNN = [
    "1201/21150 (epoch 2.839), train_loss = 1.43211, grad/param norm = 4.1021e-02, time/batch = 0.1402s",
    "1202/21150 (epoch 2.842), train_loss = 1.41893, grad/param norm = 4.0210e-02, time/batch = 0.1398s",
    "1203/21150 (epoch 2.844), train_loss = 14.98410, grad/param norm = 3.8811e+00, time/batch = 0.1401s",
    "loss is exploding, aborting.",
]
_NEURALTALK = [
    "253/15000 batch done in 5.037s. at epoch 0.84. loss cost = 37.447347, reg cost = 0.000001, ppl2 = 26.10 (smooth 48.09)",
    "254/15000 batch done in 5.082s. at epoch 0.85. loss cost = 39.408169, reg cost = 0.000001, ppl2 = 29.19 (smooth 47.91)",
    "255/15000 batch done in 4.914s. at epoch 0.85. loss cost = 140.730310, reg cost = 0.000001, ppl2 = 237360.65"
    " (smooth 2421.03)",
    "Aboring, cost seems to be exploding. Run gradcheck? Lower the learning rate?",
]
_NEURALTALK2 = ["iter 3100: 2.812004", "iter 3101: 61.304412", "loss seems to be exploding, quitting."]


@pytest.mark.parametrize("lines", [_CHAR_RNN, _NEURALTALK, _NEURALTALK2])
def test_a_trainer_saying_its_loss_exploded_is_a_spike(lines: list[str]) -> None:
    assert [i.failure for i in engine_verdict(lines)][:1] == ["loss_spike"]
