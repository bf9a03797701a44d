"""The 4096-rank fleet bench publishes what a sidecar would: its messages must be payloads the
aggregator accepts (a bench whose every message is dropped as ``mqtt_bad_payload`` measures
nothing; that happened once, when event ids were tightened to 16 hex digits)."""

from __future__ import annotations

from bench.fleet import OOM, TIMEOUT, check_payloads, match_payload, sample_payload
from monitor.mqtt import EventPayload


def test_the_bench_payloads_are_valid_event_payloads() -> None:
    check_payloads()


def test_every_rank_and_step_gets_its_own_event_id() -> None:
    ids = {EventPayload.model_validate_json(sample_payload(r, r // 8, s)).id for r in (0, 1, 4095) for s in (1, 2, 70000)}
    probe = EventPayload.model_validate_json(match_payload(7, 0, 2, "cuda_oom", OOM.format(r=7, g=7), f"f{7:07x}{2:08x}"))
    timeout = EventPayload.model_validate_json(
        match_payload(6, 0, 2, "collective_timeout", TIMEOUT.format(r=6), f"e{6:07x}{7:08x}"))
    assert len(ids | {probe.id, timeout.id}) == 11
