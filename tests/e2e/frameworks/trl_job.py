"""A tiny real TRL ``SFTTrainer`` job (CPU, gloo DDP, launched by torchrun) with one injected fault.

No downloads: a 2-layer Llama built from a ``LlamaConfig`` and a word-level tokenizer built from
the synthetic corpus's own words (``tokenizers``), wrapped as a ``PreTrainedTokenizerFast``. The
dataset is ``datasets.Dataset`` of synthetic sentences; SFTTrainer tokenizes it itself. Every
metric line is TRL's own log dict (printed on rank 0: ``loss``, ``grad_norm``, ``entropy``,
``num_tokens``, ``mean_token_accuracy``, gathered over ranks), ``logging_steps=1``. The fault fires
in the model's forward on one rank at one optimizer step (steps count from 1): a NaN in the
token embeddings' output, the final hidden state's gradient x400 (``spike``), or the faults of
``jobkit.pre_fault``.
"""

from __future__ import annotations

import os
import random
from datetime import timedelta

import torch
from datasets import Dataset
from jobkit import FAULTS, end_process_group, job_parser, pre_fault, redirect_own_output  # a sibling module
from tokenizers import Tokenizer, models, pre_tokenizers
from torch.distributed.elastic.multiprocessing.errors import record
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from trl import SFTConfig, SFTTrainer

BATCH = 4
WORDS = ["the", "model", "reads", "a", "batch", "of", "tokens", "and", "predicts", "next", "one", "while",
         "every", "rank", "keeps", "its", "own", "shard", "data", "small", "numbers", "train", "fast", "on", "cpu"]


def tokenizer() -> PreTrainedTokenizerFast:
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2} | {w: i + 3 for i, w in enumerate(dict.fromkeys(WORDS))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def corpus(n: int) -> Dataset:
    rnd = random.Random(0)
    return Dataset.from_dict({"text": [" ".join(rnd.choices(WORDS, k=rnd.randint(8, 20))) for _ in range(n)]})


class Faults:
    """Hooks on the model that fire the fault on the faulty rank's ``fault_step``-th training forward."""

    def __init__(self, model: LlamaForCausalLM, fault: str, step: int, faulty: bool, local_rank: int) -> None:
        self.fault, self.step, self.faulty, self.local_rank, self.calls = fault, step, faulty, local_rank, 0
        model.model.register_forward_pre_hook(self.before)
        model.model.embed_tokens.register_forward_hook(self.embedded)
        model.model.norm.register_forward_hook(self.normed)

    def at_fault(self) -> bool:
        return self.faulty and self.calls == self.step

    def before(self, module: torch.nn.Module, args: object) -> None:
        if module.training:
            self.calls += 1  # one forward per optimizer step (no accumulation)
            pre_fault(self.fault, self.at_fault(), self.local_rank, step=self.calls)

    def embedded(self, module: torch.nn.Module, args: object, out: torch.Tensor) -> torch.Tensor:
        if module.training and self.fault == "nan" and self.at_fault():
            out = out.clone()
            out[0, 0, 0] = float("nan")
        return out

    def normed(self, module: torch.nn.Module, args: object, out: torch.Tensor) -> torch.Tensor:
        if module.training and self.fault == "spike" and self.at_fault():
            out.register_hook(lambda g: g * 400.0)  # this rank's gradients x400: grad_norm ~100x
        return out


@record
def main() -> None:
    p = job_parser(FAULTS)
    p.add_argument("--tqdm", action="store_true", help="keep the Trainer's tqdm bar on")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--out", default=os.environ.get("TMPDIR", "/tmp") + "/trl_out")
    args = p.parse_args()
    rank, local_rank = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, rank)
    # with use_cpu=True the Trainer does not pass ddp_timeout on to the group: start it here
    torch.distributed.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    torch.manual_seed(0)
    tok = tokenizer()
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id, bos_token_id=None))
    Faults(model, args.fault, args.fault_step, rank == args.fault_rank, local_rank)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    config = SFTConfig(
        output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=BATCH, learning_rate=1e-3,
        logging_steps=1, report_to=[], save_strategy="no", disable_tqdm=not args.tqdm, use_cpu=True,
        ddp_backend="gloo", ddp_timeout=args.timeout, bf16=args.precision == "bf16", seed=0,
        dataloader_num_workers=0, max_length=32, max_grad_norm=1.0,
    )
    trainer = SFTTrainer(model=model, args=config, train_dataset=corpus(BATCH * world * args.steps),
                         processing_class=tok)
    trainer.train()
    del trainer, model  # the DDP wrapper goes before the group (jobkit.end_process_group)
    end_process_group()


if __name__ == "__main__":
    main()
