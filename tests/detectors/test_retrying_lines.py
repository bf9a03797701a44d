"""A transport error the speaker says it is retrying is a transient, not the job's failure: a
data or hub download that urllib3 retries (the HF hub's "Retrying (Retry(total=4, ...)) after
connection broken by ... Connection reset by peer", common in healthy runs), a user's shard
fetch "(attempt 1/5), retrying", torch's TCPStore client "- retrying (try=0, ...)". The same
words without a retry are still a lost peer."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("line", [
    "WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after"
    " connection broken by 'ProtocolError('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))':"
    " /api/datasets/allenai/c4/revision/main",
    "2026-12-06T02:02:06 vm rank1 WARN  fetch shard-0009 failed: [Errno 104] Connection reset by peer (attempt 1/5),"
    " retrying in 0.2s",
])
def test_a_retried_transport_error_raises_no_alert(line: str) -> None:
    lines = ["step 10 loss 2.31", line, "step 20 loss 2.12", "step 30 loss 1.98"]
    assert [i for i in engine_verdict(lines) if i.severity in ("critical", "warning")] == []


def test_the_same_error_without_a_retry_is_a_lost_peer() -> None:
    lines = ["[rank1]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Read error"
             " [127.0.0.1]:35229: Connection reset by peer"]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["peer_connection_lost"]
