"""Compatibility name for :mod:`detectors.model` (the engine's shared types)."""

from detectors.model import Event, EventKind, Finding, Role, Source

__all__ = ["Event", "EventKind", "Finding", "Role", "Source"]
