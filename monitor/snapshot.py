"""The engine's state as typed JSON, and back: what the checkpoint holds instead of a pickle.

``dump(obj)`` turns the engine (``monitor.live.LiveEngine`` with its ``detectors.detect.JobState``,
per-file ``FileState``, any dataclass or plain class of rankwatch's own) into JSON-able data;
``load(data)`` rebuilds it. The conversion is generic, by reflection over the classes, so a
field added to or removed from a dataclass needs no change here:

- ``None``, booleans, integers and strings are themselves; a finite float is itself, a
  non-finite one ``{"$float": "nan"}``; lists are lists;
- ``{"$tuple": [...]}``, ``{"$set": [...]}``, ``{"$deque": [...], "maxlen": n}``,
  ``{"$dict": [[key, value], ...]}`` (keys of any type; ``{"$kv": {...}}`` when every key is a
  string), ``{"$counter": [[key, n], ...]}``;
- bytes (a file's last bytes the parser keeps to look back at) as ``{"$bytes": text}``, the
  bytes read as latin-1 (one character each, so any bytes come back as they were) and
  redacted like every string;
- ``{"$enum": "module:Class", "value": v}`` and ``{"$obj": "module:Class", "fields": {...}}``;
- a metric sample (``detectors.model.SampleRec`` with its ``Source``), the bulk of a large job's
  state, compactly: ``{"$rec": [step, order, time, path, line, text, data]}``, loaded through
  the same checks as the ``$obj`` form it stands for.

Loading is validation, never code execution: a class is looked up only in rankwatch's own
modules (``ALLOWED_MODULES``), never called with loaded data (instances are made with
``__new__`` and their fields set one by one), its field names must be its own (a
dataclass's fields; for a plain class, what a fresh instance has), a dataclass field's
value must match its annotation, a plain class's attribute the type of a fresh instance's.
A field the snapshot lacks takes its default (a snapshot from before a field was added
still loads); anything else invalid raises ``SnapshotError`` naming where.

Every string is redacted (``detectors.redact.redact_text``) on the way out: a checkpoint
holds no secret a log line carried.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import types
import typing
from collections import Counter, deque
from enum import Enum
from functools import cache
from typing import Any

from detectors.model import SampleRec, Source
from detectors.redact import redact_text

__all__ = ["ALLOWED_MODULES", "SnapshotError", "dump", "load"]

ALLOWED_MODULES = ("detectors.", "monitor.live")
MAX_DEPTH = 64
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class SnapshotError(ValueError):
    """The snapshot is not one this code could have written; the message says where."""


# ------------------------------------------------------------------------------- classes
def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _allowed(module: str) -> bool:
    return any(module == m or module.startswith(m) for m in ALLOWED_MODULES)


@cache
def _class(name: str) -> type:
    module, _, qual = name.partition(":")
    if not _allowed(module) or not qual.isidentifier():
        raise SnapshotError(f"class {name!r} is not one of rankwatch's engine classes")
    try:
        cls = getattr(importlib.import_module(module), qual)
    except (ImportError, AttributeError):
        raise SnapshotError(f"no class {name!r}") from None
    if not isinstance(cls, type) or cls.__module__ != module:
        raise SnapshotError(f"{name!r} is not a class defined in {module}")
    return cls


def _custom(cls: type, method: str) -> bool:
    """The class defines its own ``__getstate__``/``__setstate__`` (not the dataclass default)."""
    fn = getattr(cls, method, None)
    return fn is not None and fn is not getattr(object, method, None) and not getattr(fn, "__name__", "").startswith("_dataclass_")


def _fresh(cls: type) -> dict[str, Any] | None:
    """A plain class's attributes as a fresh instance has them (None if it needs arguments)."""
    try:
        fresh = cls()
    except TypeError:
        return None
    return _state(fresh)


_template = cache(_fresh)


@cache
def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except (NameError, TypeError):
        return {}


def _state(o: Any) -> dict[str, Any]:
    cls = type(o)
    if _custom(cls, "__getstate__"):
        st = o.__getstate__()
        if isinstance(st, dict):
            return dict(st)
    if dataclasses.is_dataclass(o):
        return {f.name: getattr(o, f.name) for f in dataclasses.fields(o) if hasattr(o, f.name)}
    slots = [s for c in cls.__mro__ for s in getattr(c, "__slots__", ())]
    if slots and not hasattr(o, "__dict__"):
        return {s: getattr(o, s) for s in slots if hasattr(o, s)}
    return dict(vars(o))


# ------------------------------------------------------------------------------- dump
def dump(obj: Any) -> Any:
    """``obj`` as JSON-able data (every string redacted)."""
    return _dump(obj, 0)


def _dump(v: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise SnapshotError("nested too deep")
    t = type(v)
    # the common scalars first, by exact type (a checkpoint of a 4096-rank job holds millions)
    if t is int or t is bool or v is None:
        return v
    if t is str:
        return _redacted(v)
    if t is float:
        if math.isfinite(v):
            return v
        return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    d = depth + 1
    if t is list:
        return [_dump(x, d) for x in v]
    if t is dict and all(type(k) is str for k in v):
        kv: dict[str, Any] = {}
        memo = _REDACTED
        for k, x in v.items():
            rk = memo.get(k) or _redacted(k)
            tx = type(x)
            if tx is int or tx is bool or x is None or (tx is float and math.isfinite(x)):
                kv[rk] = x  # the scalars of a metric sample, inline
            elif tx is str:
                kv[rk] = memo.get(x) or _redacted(x)
            else:
                kv[rk] = _dump(x, d)
        return {"$kv": kv}
    if t is SampleRec and type(v.source) is Source:
        src = v.source
        return {"$rec": [v.step, v.order, _dump(v.time, d), _redacted(src.path), src.line, _redacted(src.text),
                         _dump(v.data, d)]}
    if (fields := _plain_fields(t)) is not None:  # type: ignore[arg-type]  # a type is hashable
        return {"$obj": _name(t), "fields": {k: _dump(getattr(v, k), d) for k in fields if hasattr(v, k)}}
    if isinstance(v, Enum):
        return {"$enum": _name(type(v)), "value": v.value}
    if isinstance(v, bool | int):
        return v
    if isinstance(v, str):
        return _redacted(v)
    if isinstance(v, float):
        return _dump(float(v), depth)
    if isinstance(v, list):
        return [_dump(x, d) for x in v]
    if isinstance(v, tuple) and type(v) is tuple:
        return {"$tuple": [_dump(x, d) for x in v]}
    if isinstance(v, set | frozenset):
        return {"$set": [_dump(x, d) for x in v]}
    if isinstance(v, bytes):
        return {"$bytes": _redacted(v.decode("latin-1"))}
    if isinstance(v, deque):
        return {"$deque": [_dump(x, d) for x in v], "maxlen": v.maxlen}
    if isinstance(v, Counter):
        return {"$counter": [[_dump(k, d), n] for k, n in v.items()]}
    if isinstance(v, dict):
        return {"$dict": [[_dump(k, d), _dump(x, d)] for k, x in v.items()]}
    cls = type(v)
    if not _allowed(cls.__module__):
        raise SnapshotError(f"{_name(cls)} is not an engine class")
    return {"$obj": _name(cls), "fields": {k: _dump(x, d) for k, x in _state(v).items()}}


@cache
def _plain_fields(cls: type) -> tuple[str, ...] | None:
    """An engine dataclass without its own ``__getstate__``: its field names, in order (the
    fast path of ``_dump``); None for every other type."""
    if (not isinstance(cls, type) or not dataclasses.is_dataclass(cls) or not _allowed(cls.__module__)
            or _custom(cls, "__getstate__") or issubclass(cls, Enum)):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


_REDACTED: dict[str, str] = {}
_REDACTED_MAX = 1 << 16


def _redacted(s: str) -> str:
    """``redact_text(s)``, remembered: the same strings (paths, hosts, kept lines) come back in
    every checkpoint. Bounded: the memo is emptied when it is full."""
    r = _REDACTED.get(s)
    if r is None:
        if len(_REDACTED) >= _REDACTED_MAX:
            _REDACTED.clear()
        r = _REDACTED[s] = redact_text(s)
    return r


# ------------------------------------------------------------------------------- load
def load(data: Any) -> Any:
    """The object ``dump`` was given, rebuilt and checked; ``SnapshotError`` if invalid."""
    try:
        return _load(data, "$", 0)
    except RecursionError:
        raise SnapshotError("nested too deep") from None


def _load(v: Any, where: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise SnapshotError(f"{where}: nested too deep")
    d = depth + 1
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, list):
        return [_load(x, f"{where}[{i}]", d) for i, x in enumerate(v)]
    if not isinstance(v, dict) or len(v) not in (1, 2):
        raise SnapshotError(f"{where}: not a snapshot value")
    tag = next(iter(v))
    body = v[tag]
    if tag == "$bytes" and len(v) == 1 and isinstance(body, str):
        try:
            return body.encode("latin-1")
        except UnicodeEncodeError:
            raise SnapshotError(f"{where}: bytes hold characters above U+00FF") from None
    if tag == "$float" and len(v) == 1 and body in _NONFINITE:
        return _NONFINITE[body]
    if tag in ("$tuple", "$set", "$deque") and isinstance(body, list):
        items = [_load(x, f"{where}[{i}]", d) for i, x in enumerate(body)]
        if tag == "$tuple" and len(v) == 1:
            return tuple(items)
        if tag == "$set" and len(v) == 1:
            return set(_hashable(items, where))
        maxlen = v.get("maxlen")
        if tag == "$deque" and set(v) == {"$deque", "maxlen"} and (maxlen is None or (isinstance(maxlen, int) and maxlen >= 0)):
            return deque(items, maxlen=maxlen)
    if tag == "$kv" and len(v) == 1 and isinstance(body, dict):
        return {k: _load(x, f"{where}.{k}", d) for k, x in body.items()}
    if tag in ("$dict", "$counter") and len(v) == 1 and isinstance(body, list):
        pairs = []
        for i, pair in enumerate(body):
            if not isinstance(pair, list) or len(pair) != 2:
                raise SnapshotError(f"{where}[{i}]: not a key/value pair")
            pairs.append((_load(pair[0], f"{where}[{i}].key", d), _load(pair[1], f"{where}[{i}].value", d)))
        keys = _hashable([k for k, _ in pairs], where)
        if tag == "$counter":
            if not all(isinstance(n, int) and not isinstance(n, bool) for _, n in pairs):
                raise SnapshotError(f"{where}: counts must be integers")
            return Counter(dict(zip(keys, (n for _, n in pairs), strict=True)))
        return dict(zip(keys, (x for _, x in pairs), strict=True))
    if tag == "$enum" and set(v) == {"$enum", "value"} and isinstance(body, str):
        cls = _class(body)
        if not issubclass(cls, Enum):
            raise SnapshotError(f"{where}: {body} is not an enum")
        try:
            return cls(v["value"])
        except ValueError:
            raise SnapshotError(f"{where}: {v['value']!r} is not a {body}") from None
    if tag == "$obj" and set(v) == {"$obj", "fields"} and isinstance(body, str) and isinstance(v["fields"], dict):
        return _object(body, v["fields"], where, d)
    if tag == "$rec" and len(v) == 1 and isinstance(body, list) and len(body) == 7:
        step, order, time, path, line, text, data = body
        raw = {"step": step, "order": order, "time": time, "data": data,
               "source": {"$obj": _name(Source), "fields": {"path": path, "line": line, "text": text}}}
        return _object(_name(SampleRec), raw, where, d)
    raise SnapshotError(f"{where}: not a snapshot value")


def _hashable(items: list[Any], where: str) -> list[Any]:
    for k in items:
        try:
            hash(k)
        except TypeError:
            raise SnapshotError(f"{where}: a key or set member must be hashable") from None
    return items


def _object(name: str, raw: dict[str, Any], where: str, depth: int) -> Any:
    cls = _class(name)
    if issubclass(cls, Enum):
        raise SnapshotError(f"{where}: {name} is an enum")
    fields: dict[str, Any] = {k: _load(x, f"{where}.{k}", depth) for k, x in raw.items()}
    if dataclasses.is_dataclass(cls):
        known = {f.name: f for f in dataclasses.fields(cls)}
        hints = _hints(cls)
        for k, x in fields.items():
            if k not in known:
                raise SnapshotError(f"{where}: {name} has no field {k!r}")
            if k in hints and not _fits(x, hints[k]):
                raise SnapshotError(f"{where}.{k}: {type(x).__name__} is not {hints[k]}")
        for k, f in known.items():
            if k in fields:
                continue
            if f.default is not dataclasses.MISSING:
                fields[k] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                fields[k] = f.default_factory()
            elif not _custom(cls, "__setstate__"):
                raise SnapshotError(f"{where}: {name} lacks field {k!r}")
    else:
        template = _template(typing.cast(Any, cls))
        if template is None:
            raise SnapshotError(f"{where}: {name} cannot be rebuilt")
        for k, x in fields.items():
            if k not in template:
                raise SnapshotError(f"{where}: {name} has no attribute {k!r}")
            ref = template[k]
            if x is not None and ref is not None and not isinstance(x, type(ref)) and not (isinstance(ref, float) and isinstance(x, int)):
                raise SnapshotError(f"{where}.{k}: {type(x).__name__} is not {type(ref).__name__}")
        missing = template.keys() - fields.keys()
        if missing:
            defaults = _fresh(cls) or {}  # fresh defaults, never shared with the template
            fields.update({k: defaults[k] for k in missing})
    obj = cls.__new__(cls)
    if _custom(cls, "__setstate__"):
        obj.__setstate__(fields)  # type: ignore[attr-defined]
    else:
        for k, x in fields.items():
            object.__setattr__(obj, k, x)
    return obj


def _fits(v: Any, tp: Any) -> bool:
    """``v`` matches the annotation ``tp`` (containers checked all the way down)."""
    origin: Any
    if tp is Any or isinstance(tp, typing.TypeVar):
        return True
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(v, a) for a in args)
    if tp is None or tp is type(None):
        return v is None
    if origin is typing.Literal:
        return v in args
    if origin is None:
        if not isinstance(tp, type):
            return True  # an alias this checker does not know: accepted
        if tp is float:
            return isinstance(v, int | float) and not isinstance(v, bool)
        if tp is int:
            return isinstance(v, int) and not isinstance(v, bool)
        return isinstance(v, tp)
    if not isinstance(origin, type) or not isinstance(v, origin):
        return isinstance(origin, type) is False
    v = typing.cast(Any, v)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(x, args[0]) for x in v)
        return len(args) == len(v) and all(_fits(x, a) for x, a in zip(v, args, strict=True))
    if issubclass(origin, dict) and len(args) == 2:
        return all(_fits(k, args[0]) and _fits(x, args[1]) for k, x in v.items())
    if issubclass(origin, list | set | frozenset | deque) and len(args) == 1:
        return all(_fits(x, args[0]) for x in v)
    return True
