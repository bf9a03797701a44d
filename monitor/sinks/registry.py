"""Sinks by name: a new sink is one module with ``@register("name")`` on its class."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from monitor.sinks.base import Sink

__all__ = ["SINKS", "build", "register"]

SINKS: dict[str, type[Any]] = {}
T = TypeVar("T", bound=type[Any])


def register(kind: str) -> Callable[[T], T]:
    def deco(cls: T) -> T:
        if kind in SINKS:
            raise ValueError(f"sink {kind!r} registered twice")
        cls.kind = kind
        SINKS[kind] = cls
        return cls

    return deco


def build(kind: str, **options: Any) -> Sink:
    try:
        cls = SINKS[kind]
    except KeyError:
        raise ValueError(f"unknown sink {kind!r}; known: {', '.join(sorted(SINKS))}") from None
    sink: Sink = cls(**options)
    return sink
