"""A tiny real Keras 3 job (torch backend), one process, with one injected fault.

``model.fit(verbose=1|2)`` prints Keras's Progbar, ``TerminateOnNaN`` stops on a non-finite loss,
``CSVLogger`` writes one row per epoch to ``$PL_LOG_DIR/training.csv``. The fault fires in a
layer's ``call`` at train step k (steps count from 1 over the whole fit: 4 epochs x 5 steps);
``spike`` multiplies the learning rate by 1000 for that step.
"""

from __future__ import annotations

import os

os.environ.setdefault("KERAS_BACKEND", "torch")

import keras  # after the backend is chosen
import numpy as np
from jobkit import FEATURES, job_parser, pre_fault  # a sibling: the job runs as a script from this folder


class Faulty(keras.layers.Layer):
    """Identity, except at the fault step of training."""

    def __init__(self, fault: str, at: int, **kw: object) -> None:
        super().__init__(**kw)
        self.fault, self.at, self.calls = fault, at, 0

    def call(self, x: object, training: bool | None = None) -> object:
        if training:
            self.calls += 1
            at_fault = self.calls == self.at
            pre_fault(self.fault, at_fault, 0)
            if at_fault and self.fault == "nan":
                x = x * float("nan")  # type: ignore[operator]
        return x


class LrSpike(keras.callbacks.Callback):
    """The learning rate x1000 for one step."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.n, self.saved = at, 0, 0.0

    def on_train_batch_begin(self, batch: int, logs: dict[str, float] | None = None) -> None:
        self.n += 1
        if self.n == self.at:
            self.saved = float(self.model.optimizer.learning_rate)
            self.model.optimizer.learning_rate = self.saved * 1000.0
        elif self.n == self.at + 1:
            self.model.optimizer.learning_rate = self.saved


def main() -> None:
    p = job_parser(["none", "nan", "exception", "sigkill", "oom", "spike"])
    p.add_argument("--verbose", type=int, default=1)
    p.add_argument("--csv", default=os.path.join(os.environ.get("PL_LOG_DIR", "/tmp"), "training.csv"))
    p.set_defaults(fault_step=7)
    args = p.parse_args()
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((160, FEATURES)).astype("float32")
    y = (0.25 * x @ np.linspace(-1, 1, FEATURES) + 0.05 * rng.standard_normal(160)).astype("float32")
    model = keras.Sequential([keras.Input((FEATURES,)), Faulty(args.fault, args.fault_step),
                              keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05, clipnorm=1.0), loss="mse")
    callbacks = [keras.callbacks.TerminateOnNaN(), keras.callbacks.CSVLogger(args.csv)]
    if args.fault == "spike":
        callbacks.append(LrSpike(args.fault_step))
    model.fit(x, y, batch_size=8, epochs=4, steps_per_epoch=5, shuffle=False,
              verbose=args.verbose, callbacks=callbacks)  # 4 epochs x 5 steps = 20 steps
    print("done")


if __name__ == "__main__":
    main()
