"""Where incidents go: sinks behind one small contract, found by name in a registry.

A sink is one file here: a class with ``kind``, ``stats`` (``monitor.sinks.base.Stats``),
``incident(change)`` (never blocks, never raises on bad input: it counts),
``async run()`` (delivers until ``stop()``) and ``stop()``, registered with
``@register("name")``. ``build(name, **options)`` makes one. Every sink counts what it
received, emitted, dropped (by ``DropReason``) and the errors it met; the daemon exports
them as ``rankwatch_sink_*_total{sink=...}`` and one parametrised compliance test
(``tests/monitor/test_sinks.py``) holds every registered sink to the contract.
"""

# importing the adapters registers them
from monitor.sinks import console as _console  # noqa: F401
from monitor.sinks import mqtt as _mqtt  # noqa: F401
from monitor.sinks import webhook as _webhook  # noqa: F401
from monitor.sinks.base import DropReason, Sink, Stats
from monitor.sinks.registry import SINKS, build, register

__all__ = ["SINKS", "DropReason", "Sink", "Stats", "build", "register"]
