"""The failure catalog: one YAML file per failure, validated at load.

Adding a failure is adding a file here. ``load_catalog()`` validates every entry with
the pydantic models below, checks that ids are unique and that every ``related`` id
exists, and compiles each fingerprint to make sure it is safe for a linear-time engine
(no backreferences, no look-around). The fingerprints are also the patterns of the
fast-path scan, so a new entry is automatically part of it.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = [
    "Catalog",
    "CatalogError",
    "Entry",
    "Fingerprint",
    "Stack",
    "load_catalog",
]


class Stack(StrEnum):
    PYTORCH = "pytorch"
    HF_TRAINER = "hf_trainer"
    DEEPSPEED = "deepspeed"
    MEGATRON = "megatron"
    LIGHTNING = "lightning"
    VLLM = "vllm"


_UNSAFE = re.compile(r"\\[1-9]|\(\?P=|\(\?\(|\(\?<?[=!]|\(\?>|[*+?}]\+")  # backrefs (numbered, named), conditionals, look-around, atomic, possessive


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fingerprint(_Strict):
    """A regex searched in the message body of a line (after prefixes are stripped).

    Named groups become the match's data (``seq``, ``op``, ``xid``, ``from_scale``...).
    ``role`` overrides the entry's role for this pattern (e.g. a timeout line that only
    says a peer went away).
    """

    pattern: str
    description: str
    role: Literal["cause", "collateral", "benign"] | None = None
    example: str | None = None
    # the line reports what the speaker saw happen elsewhere (another rank's timeout), not
    # its own failure: a hang's culprit may be the rank that says it
    observed: bool = False
    # overrides the entry's rank_scope for this pattern ("job": a configuration error of the
    # whole job, whichever rank printed it)
    rank_scope: Literal["rank", "job"] | None = None
    # a loss scaler's fixed starting scale (apex amp's dynamic scaler: 65536): an overflow at a
    # scale above it means the scaler had grown back during training, so it is not warm-up
    initial_scale: float | None = None
    # the line names ranks that reached a sync point (group ``ranks``; optional ``key``,
    # ``world_size``, ``timeout`` as H:MM:SS): the culprit is the rank absent from every
    # report. "waiting": still within its timeout (no alert until it times out or outlasts
    # it); "stalled": the speaker already judged the wait too long; "released": the sync
    # point was passed (its ``key``, or every open one); "missing": the line names ranks
    # ABSENT from the sync point (Horovod's "Missing ranks:" list) after a stall warning
    presence: Literal["waiting", "stalled", "released", "missing"] | None = None

    @field_validator("pattern")
    @classmethod
    def _linear_time_safe(cls, v: str) -> str:
        if _UNSAFE.search(v):
            raise ValueError("pattern uses a construct a linear-time engine cannot run (backreference, look-around, atomic or possessive group)")
        if v.startswith("^"):
            raise ValueError("pattern must not be anchored with '^': it is searched in the message body")
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"invalid regex: {exc}") from exc
        return v


class Symptom(_Strict):
    symptom: str
    why: str


class Fix(_Strict):
    change: str
    snippet: str | None = None
    why: str


class Entry(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    category: Literal["mixed_precision", "numerics", "memory", "distributed", "crash", "hardware", "data", "performance"]
    tags: list[str]
    hardware: bool
    role: Literal["cause", "collateral", "benign"]
    severity: Literal["critical", "warning", "info"]
    priority: int = Field(ge=0, le=100, description="rank among causes when choosing an initiator")
    # behaviour (read by the engine, so a new failure is one file):
    # rank_scope "job": the signal is reduced over ranks (an all-reduced overflow flag, a
    # scale every rank shares): a rank named on the line is the logging rank, never the cause
    rank_scope: Literal["rank", "job"] = "rank"
    # launcher exit codes (negative: the signal) that mean this failure when the rank's own
    # log says nothing (torchrun "exitcode: -9" → rank_killed)
    exit_codes: list[int] = []
    # several ranks report this failure as their own cause: "first" names the first of them;
    # "none" makes it the job's (an error of the communicator or the node every member hits,
    # such as NCCL's unhandled CUDA error on every rank at once): the initiator is null
    several_ranks: Literal["first", "none"] = "first"
    summary: str
    mechanism: str
    fingerprints: list[Fingerprint]
    symptoms: list[Symptom] = Field(min_length=1)
    root_causes: list[str] = Field(min_length=1)
    fix: dict[Stack, Fix]
    verify: str
    related: list[str] = []
    references: list[str] = []
    # depth fields (the encyclopedia): optional until every entry has them
    observe: list[str] = []
    confirm: list[str] = []
    prevention: list[str] = []
    scale_notes: str | None = None
    affected: list[str] = []
    data_table: list[dict[str, str]] = []

    @model_validator(mode="after")
    def _fix_has_pytorch(self) -> Entry:
        if Stack.PYTORCH not in self.fix:
            raise ValueError("fix must at least give the plain PyTorch change ('pytorch')")
        return self


class CatalogError(ValueError):
    """A catalog file is invalid; the message names the file and the field."""


class Catalog:
    def __init__(self, entries: list[Entry]) -> None:
        self.entries: dict[str, Entry] = {}
        for e in entries:
            if e.id in self.entries:
                raise CatalogError(f"duplicate catalog id {e.id!r}")
            self.entries[e.id] = e
        for e in entries:
            for r in e.related:
                if r not in self.entries:
                    raise CatalogError(f"{e.id}: related id {r!r} is not in the catalog")

    def __getitem__(self, failure_id: str) -> Entry:
        return self.entries[failure_id]

    def get(self, failure_id: str | None, default: Entry | None = None) -> Entry | None:
        return self.entries.get(failure_id, default) if failure_id is not None else default

    def __contains__(self, failure_id: object) -> bool:
        return failure_id in self.entries

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)


def _parse(name: str, text: str) -> Entry:
    try:
        raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml when present
    except yaml.YAMLError as exc:
        raise CatalogError(f"{name}: not valid YAML: {exc}") from exc
    try:
        entry = Entry.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{name}: field {loc!r}: {first['msg']} ({len(exc.errors())} error(s))") from exc
    if f"{entry.id}.yaml" != name:
        raise CatalogError(f"{name}: id {entry.id!r} does not match the file name")
    return entry


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """Load and validate every ``*.yaml`` entry shipped in this package."""
    files = sorted(
        (p for p in resources.files(__package__).iterdir() if p.name.endswith(".yaml")),
        key=lambda p: p.name,
    )
    return Catalog([_parse(p.name, p.read_text(encoding="utf-8")) for p in files])
