"""Ray's memory monitor killing workers when the node's host memory runs out: the raylet's
``N Workers (tasks / actors) killed due to memory pressure (OOM)``, a host OOM kill (``host_oom``)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("line", [
    # https://github.com/jchengai/planTF/issues/28
    "(raylet) [2024-08-25 19:21:02,241 E 1111013 1111013] (raylet) node_manager.cc:3064: 12 Workers (tasks / actors) "
    "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: "
    "b8aad7ac53c083fcae4851424e0362cec4a21916876b69bb1722ed29, IP: 172.31.105.218) over the last time period. To see "
    "more information about the Workers killed on this node, use `ray logs raylet.out -ip 172.31.105.218`",
    # https://github.com/ray-project/ray/issues/34695 (the head node's raylet.out, no '(raylet)' driver prefix)
    "[2023-04-19 16:22:19,798 E 329 329] (raylet) node_manager.cc:3069: 13 Workers (tasks / actors) killed due to "
    "memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: "
    "28753320d9099742bb03374decae7140368403e9aeda01a4e332761a, IP: 10.0.10.135) over the last time period. To see "
    "more information about the Workers killed on this node, use `ray logs raylet.out -ip 10.0.10.135`",
])
def test_rays_memory_monitor_killing_workers_is_a_host_oom(line: str) -> None:
    found = engine_verdict([line])
    assert found and found[0].failure == "host_oom"
