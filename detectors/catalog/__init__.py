"""The failure catalog: one YAML file per failure, validated at load.

Adding a failure is adding a file here. ``load_catalog()`` validates every entry against the
types below (with pydantic), checks that ids are unique and that every ``related`` id exists,
and checks each fingerprint is safe for a linear-time engine (no backreferences, no
look-around). The fingerprints are also the patterns of the fast-path scan, so a new entry is
automatically part of it.

The entries are plain frozen dataclasses: pydantic (~0.1 s of import) is loaded only to
validate YAML. A validated catalog can be kept by a ``CatalogCache`` (``set_catalog_cache``;
the CLI uses ``monitor.scancache``), keyed by the bytes of every YAML file and the shape of
these types, so a later start that finds the same files skips YAML parsing and validation.
The catalog itself does no I/O beyond reading its own package files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, Protocol

__all__ = [
    "Catalog",
    "CatalogCache",
    "CatalogError",
    "Entry",
    "Fingerprint",
    "Stack",
    "entry_from_dict",
    "entry_to_dict",
    "load_catalog",
    "set_catalog_cache",
    "validate_entry",
]


class Stack(StrEnum):
    PYTORCH = "pytorch"
    HF_TRAINER = "hf_trainer"
    DEEPSPEED = "deepspeed"
    MEGATRON = "megatron"
    LIGHTNING = "lightning"
    VLLM = "vllm"


_UNSAFE = re.compile(r"\\[1-9]|\(\?P=|\(\?\(|\(\?<?[=!]|\(\?>|[*+?}]\+")  # backrefs (numbered, named), conditionals, look-around, atomic, possessive
_ID = re.compile(r"[a-z][a-z0-9_]*")
# pydantic reads this from each type below: an unknown key in a YAML file is an error
_FORBID: dict[str, Any] = {"extra": "forbid"}


def _pattern_problem(pattern: str) -> str | None:
    """Why a fingerprint cannot be searched by a linear-time engine in a message body, or None."""
    if _UNSAFE.search(pattern):
        return "pattern uses a construct a linear-time engine cannot run (backreference, look-around, atomic or possessive group)"
    if pattern.startswith("^"):
        return "pattern must not be anchored with '^': it is searched in the message body"
    return None


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A regex searched in the message body of a line (after prefixes are stripped).

    Named groups become the match's data (``seq``, ``op``, ``xid``, ``from_scale``...).
    ``role`` overrides the entry's role for this pattern (e.g. a timeout line that only
    says a peer went away).
    """

    __pydantic_config__ = _FORBID

    pattern: str
    description: str
    role: Literal["cause", "collateral", "benign"] | None = None
    example: str | None = None
    # the line reports what the speaker saw happen elsewhere (another rank's timeout), not
    # its own failure: a hang's culprit may be the rank that says it
    observed: bool = False
    # a line naming two ranks and their progress (``rank_a``/``seq_a``, ``rank_b``/``seq_b``)
    # names the rank behind; when the two are LEVEL (the same sequence number) they disagree on
    # the collective itself, which is this other failure id: the rank every such report names
    # is the odd one (PyTorch's desync check: "Rank 0 is running ... OpType=ALLREDUCE, but Rank 1
    # is running ... OpType=ALLGATHER")
    when_level: str | None = None
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
    # the non-finite value the line reports may be a scaled gradient's (a writer warning about
    # whatever scalar it was given): in a job with a dynamic loss scaler at work it is an
    # overflow the scaler skipped, not a failure
    scaled: bool = False
    # the exit codes this line's failure ends its process with (a C++ abort: -6), when the
    # entry's own ``ends_rank_with`` does not say it: the line names no rank, and the one worker
    # a launcher saw end that way is the one that printed it
    ends_rank_with: list[int] = field(default_factory=list)
    # the line is one rank's own note that ITS gradients held inf/NaN before the overflow flag
    # was all-reduced (a hand-written scaler's "found 12 inf/nan values in fp16 grads (local)"):
    # no scale move of its own; when one rank alone writes such notes, the overflows that
    # skip every rank's step came from that rank's batch
    local_overflow: bool = False
    # the line tells the dynamic scaler GREW its scale back after a clean window (``to_scale``):
    # no overflow; the next back-off that names only its new scale backed off from this one
    scale_growth: bool = False
    # the line is a summary of how many of the last steps the scaler skipped (groups ``skipped`` and
    # ``window``: "skipped 17 of the last 50 steps", "68/300 optimizer steps skipped"): a rate, not
    # one overflow; the overflow-skips rule judges the windows after the first
    skip_window: bool = False
    # a collective mismatch the receiving rank reports (gloo's "Received data size doesn't match"):
    # the rank whose call differs may be another; when one rank's own lines just above stand
    # apart from its peers' (the same line with other numbers, a warning no peer printed), that
    # rank is named, marked as inferred (detectors.oddrank)
    odd_rank: bool = False

    def __post_init__(self) -> None:
        if problem := _pattern_problem(self.pattern):
            raise ValueError(problem)


@dataclass(frozen=True, slots=True)
class Symptom:
    __pydantic_config__ = _FORBID

    symptom: str
    why: str


@dataclass(frozen=True, slots=True)
class Fix:
    __pydantic_config__ = _FORBID

    change: str
    why: str
    snippet: str | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    __pydantic_config__ = _FORBID

    id: str  # [a-z][a-z0-9_]*, the file's name
    title: str
    category: Literal["mixed_precision", "numerics", "memory", "distributed", "crash", "hardware", "data", "performance"]
    tags: list[str]
    hardware: bool
    role: Literal["cause", "collateral", "benign"]
    severity: Literal["critical", "warning", "info"]
    priority: int  # 0-100: rank among causes when choosing an initiator
    summary: str
    mechanism: str
    fingerprints: list[Fingerprint]
    symptoms: list[Symptom]  # at least one
    root_causes: list[str]  # at least one
    fix: dict[Stack, Fix]  # at least the plain PyTorch change
    verify: str
    # behaviour (read by the engine, so a new failure is one file):
    # rank_scope "job": the signal is reduced over ranks (an all-reduced overflow flag, a
    # scale every rank shares): a rank named on the line is the logging rank, never the cause
    rank_scope: Literal["rank", "job"] = "rank"
    # launcher exit codes (negative: the signal) that mean this failure when the rank's own
    # log says nothing (torchrun "exitcode: -9" → rank_killed)
    exit_codes: list[int] = field(default_factory=list)
    # launcher exit codes this failure ends the process it hits with (the OOM killer's SIGKILL,
    # -9): when its own lines name no rank and exactly one rank ended so, it is that rank
    ends_rank_with: list[int] = field(default_factory=list)
    # several ranks report this failure as their own cause: "first" names the first of them;
    # "none" makes it the job's (an error of the communicator or the node every member hits,
    # such as NCCL's unhandled CUDA error on every rank at once): the initiator is null
    several_ranks: Literal["first", "none"] = "first"
    related: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    # depth fields (the encyclopedia): optional until every entry has them
    observe: list[str] = field(default_factory=list)
    confirm: list[str] = field(default_factory=list)
    prevention: list[str] = field(default_factory=list)
    scale_notes: str | None = None
    affected: list[str] = field(default_factory=list)
    data_table: list[dict[str, str]] = field(default_factory=list)


class CatalogError(ValueError):
    """A catalog file is invalid; the message names the file and the field."""


class CatalogCache(Protocol):
    """Keeps a validated catalog between processes (bytes under a key); misses are None."""

    def load(self, key: str) -> bytes | None: ...

    def store(self, key: str, data: bytes) -> None: ...


_CACHE: CatalogCache | None = None


def set_catalog_cache(cache: CatalogCache | None) -> None:
    """Keep validated catalogs in ``cache`` from now on (None: validate the YAML every time)."""
    global _CACHE
    _CACHE = cache
    load_catalog.cache_clear()


def _problems(entry: Entry) -> list[tuple[str, str]]:
    """What the types alone do not say: (field path, message) for each rule an entry breaks."""
    out: list[tuple[str, str]] = []
    if not _ID.fullmatch(entry.id):
        out.append(("id", "must be lower-case letters, digits and '_', starting with a letter"))
    if not 0 <= entry.priority <= 100:
        out.append(("priority", "must be between 0 and 100"))
    for name in ("symptoms", "root_causes"):
        if not getattr(entry, name):
            out.append((name, "must have at least one item"))
    if Stack.PYTORCH not in entry.fix:
        out.append(("fix", "fix must at least give the plain PyTorch change ('pytorch')"))
    for i, fp in enumerate(entry.fingerprints):
        try:  # (a Fingerprint cannot be made with an unsafe pattern: see __post_init__)
            re.compile(fp.pattern)
        except re.error as exc:
            out.append((f"fingerprints.{i}.pattern", f"invalid regex: {exc}"))
    return out


@lru_cache(maxsize=1)
def _adapter() -> Any:
    from pydantic import TypeAdapter  # only to validate YAML: a cached catalog never loads it

    return TypeAdapter(Entry)


def validate_entry(raw: object, name: str = "entry") -> Entry:
    """``raw`` (a YAML document) as an Entry, or a CatalogError naming ``name`` and the field."""
    from pydantic import ValidationError

    try:
        entry: Entry = _adapter().validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{name}: field {loc!r}: {first['msg']} ({len(exc.errors())} error(s))") from exc
    problems = _problems(entry)
    if problems:
        loc, msg = problems[0]
        raise CatalogError(f"{name}: field {loc!r}: {msg} ({len(problems)} error(s))")
    return entry


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    """The entry as JSON-ready data (the YAML file's shape, every default filled in)."""
    data: dict[str, Any] = json.loads(json.dumps(asdict(entry), ensure_ascii=False))
    return data


def entry_from_dict(data: dict[str, Any]) -> Entry:
    """An Entry from ``entry_to_dict``'s output, without validation (the data was validated)."""
    return Entry(**{
        **data,
        "fingerprints": [Fingerprint(**f) for f in data["fingerprints"]],
        "symptoms": [Symptom(**s) for s in data["symptoms"]],
        "fix": {Stack(k): Fix(**v) for k, v in data["fix"].items()},
    })


def _parse(name: str, text: str) -> Entry:
    import yaml  # only when the YAML must be read: a cached catalog never loads it

    try:
        raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml when present
    except yaml.YAMLError as exc:
        raise CatalogError(f"{name}: not valid YAML: {exc}") from exc
    entry = validate_entry(raw, name)
    if f"{entry.id}.yaml" != name:
        raise CatalogError(f"{name}: id {entry.id!r} does not match the file name")
    return entry


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
            for fp in e.fingerprints:
                if fp.when_level is not None and fp.when_level not in self.entries:
                    raise CatalogError(f"{e.id}: when_level id {fp.when_level!r} is not in the catalog")

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



def _cache_key(files: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256(b"rankwatch-catalog-1\0")
    for cls in (Entry, Fingerprint, Symptom, Fix):  # a changed type is a new key
        h.update(repr([(f.name, str(f.type)) for f in fields(cls)]).encode())
    for name, data in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _from_cache(data: bytes) -> list[Entry] | None:
    try:
        return [entry_from_dict(d) for d in json.loads(data)]
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # damaged: validate the YAML instead


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """Load and validate every ``*.yaml`` entry shipped in this package."""
    files = sorted(
        ((p.name, p.read_bytes()) for p in resources.files(__package__).iterdir() if p.name.endswith(".yaml")),
        key=lambda f: f[0],
    )
    cache, key = _CACHE, _cache_key(files)
    if cache is not None:
        data = cache.load(key)
        entries = _from_cache(data) if data is not None else None
        if entries is not None:
            return Catalog(entries)
    entries = [_parse(name, data.decode("utf-8")) for name, data in files]
    catalog = Catalog(entries)
    if cache is not None:
        cache.store(key, json.dumps([entry_to_dict(e) for e in entries], ensure_ascii=False).encode())
    return catalog
