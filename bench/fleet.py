"""Replay a 512-node, 4096-rank job through a real Mosquitto into one ``rankwatch aggregate``.

What runs, all on this machine:

* ``mosquitto`` (the Debian package) on a free port, persistence off;
* ``rankwatch aggregate`` (a subprocess, the real CLI) subscribed to the job's findings;
* simulated sidecars: ``--nodes`` nodes over ``--connections`` MQTT connections (default: one
  per node up to 200; paho's ``select()`` loop cannot use file descriptors past 1024, so
  beyond that a connection carries several nodes' messages, each still with its own
  ``host``), publishing, QoS 1
  like the real publisher, the step samples of its ``--ranks-per-node`` ranks as
  ``EventPayload`` JSON on ``rankwatch/v1/<job>/findings/<rank>`` — paced to an offered
  rate that steps up phase by phase (``--rates``, messages/s over the whole job);
* an observer subscribed to ``incidents/#``.

Per phase it reports the offered and the sustained rate (samples the aggregator had folded
in by the end of the phase, read from its own ``rankwatch_step`` gauges), the backlog and
how long it took to drain, and the aggregator's CPU (% of one core) and RSS from /proc.
During each phase it injects ``--probes`` findings (a ``cuda_oom`` on a fresh rank, then the
``collective_timeout`` of the others) and measures finding → incident latency: from the
publish to the first incident message on the broker that names that rank. "Where it
breaks" is the first phase whose backlog does not drain within ``--drain`` seconds.

Nothing asserts: the figures depend on the machine (2 shared cores here: the broker, the
aggregator and the load generator compete for them). Run: ``python -m bench.fleet``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
JOB = "fleet"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def proc_usage(pid: int) -> tuple[float, float]:
    """(CPU seconds, RSS MB) of ``pid`` from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
        rss = 0.0
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
        return cpu, rss
    except (OSError, IndexError, ValueError):
        return 0.0, 0.0


def topic(kind: str, leaf: str) -> str:
    return f"rankwatch/v1/{JOB}/{kind}/{leaf}"


def sample_payload(rank: int, node: int, step: int) -> bytes:
    """A step sample, built as JSON text (the load generator cannot afford a pydantic model per
    message); ``check_payloads`` validates both shapes against ``EventPayload`` before a run."""
    loss = 2.0 + 8.0 / (1 + step / 500)
    d = {
        "schema": 1, "job": JOB, "id": f"{rank:08x}{step:08x}", "host": f"node{node:03d}", "kind": "sample",
        "path": f"rank{rank}.log", "line": step, "text": f"step {step} | loss {loss:.4f} | grad_norm 0.8",
        "rank": rank, "local_rank": rank % 8, "time": 1.7e9 + step, "step": step, "failure": None,
        "data": {"loss": round(loss, 4), "grad_norm": 0.8, "scope": "local"},
    }
    return json.dumps(d).encode()


def match_payload(rank: int, node: int, step: int, failure: str, text: str, uid: str) -> bytes:
    """A finding; ``uid`` is 16 hex digits, as the sidecar's event ids are."""
    d = {
        "schema": 1, "job": JOB, "id": uid, "host": f"node{node:03d}", "kind": "match",
        "path": f"rank{rank}.log", "line": 10_000_000 + step, "text": text, "rank": rank, "local_rank": rank % 8,
        "time": 1.7e9 + step, "step": step, "failure": failure, "data": {"pattern": "bench probe"},
    }
    return json.dumps(d).encode()


OOM = "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {g} has a total capacity of 79.10 GiB"
TIMEOUT = ("[rank{r}]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 ms")


def check_payloads() -> None:
    """Refuse to run on payloads the aggregator would drop as invalid: a bench whose messages
    are all counted in ``rankwatch_dropped_total{reason="mqtt_bad_payload"}`` measures nothing."""
    from monitor.mqtt import EventPayload

    EventPayload.model_validate_json(sample_payload(4095, 511, 1))
    EventPayload.model_validate_json(match_payload(4095, 511, 1, "cuda_oom", OOM.format(r=4095, g=7), f"f{4095:07x}{1:08x}"))
    EventPayload.model_validate_json(match_payload(4094, 511, 1, "collective_timeout", TIMEOUT.format(r=4094),
                                                   f"e{4094:07x}{4095:08x}"))


@dataclass
class Phase:
    rate: int
    seconds: float
    published: int = 0
    folded_at_end: int = 0
    drain_s: float | None = None
    backlog_at_end: int = 0
    agg_cpu_pct: float = 0.0
    broker_cpu_pct: float = 0.0
    agg_rss_mb: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    probes_lost: int = 0
    load: tuple[float, float] = (0.0, 0.0)

    @property
    def sustained(self) -> float:
        return self.folded_at_end / self.seconds


class Fleet:
    def __init__(self, nodes: int, per_node: int, connections: int) -> None:
        import paho.mqtt.client as mqtt

        self.mqtt = mqtt
        self.nodes, self.per_node = nodes, per_node
        self.ranks = nodes * per_node
        self.tmp = Path(tempfile.mkdtemp(prefix="rw-fleet-"))
        self.port = free_port()
        conf = self.tmp / "mosquitto.conf"
        conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                        "max_queued_messages 1000000\nmax_inflight_messages 1000\nlog_type error\n")
        self.broker = subprocess.Popen([shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c", str(conf)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_port(self.port)
        self.mport = free_port()
        self.agg = subprocess.Popen(
            [sys.executable, "-m", "monitor", "aggregate", "--mqtt", f"mqtt://127.0.0.1:{self.port}", "--job", JOB,
             "--metrics-addr", f"127.0.0.1:{self.mport}", "--state-dir", str(self.tmp / "state"), "--quiet"],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=open(self.tmp / "aggregate.err", "wb"),  # noqa: SIM115
        )
        self.incidents: list[tuple[float, dict]] = []
        self.cond = threading.Condition()
        self.observer = self._client("observer")
        self.observer.on_message = self._on_incident
        self.observer.subscribe(topic("incidents", "#"), qos=1)
        self.agg_online = threading.Event()
        self.observer.message_callback_add(topic("status", "#"), self._on_status)
        self.observer.subscribe(topic("status", "#"), qos=1)
        self.observer.loop_start()
        if not self.agg_online.wait(60):
            raise SystemExit(f"the aggregator did not come online: {(self.tmp / 'aggregate.err').read_text()[-2000:]}")
        conns = [self._client(f"conn{i:03d}") for i in range(max(1, min(connections, nodes)))]
        for c in conns:
            c.loop_start()
        self.sidecars = [conns[n % len(conns)] for n in range(nodes)]  # node -> its connection
        self.connections = len(conns)
        self.step = [0] * self.ranks
        self.probe_rank = 1

    def _wait_port(self, port: int) -> None:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
            time.sleep(0.05)
        raise SystemExit(f"nothing listens on {port}")

    def _client(self, cid: str):  # type: ignore[no-untyped-def]
        c = self.mqtt.Client(self.mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{cid}", clean_session=True)
        c.max_inflight_messages_set(1000)
        c.max_queued_messages_set(0)
        c.connect("127.0.0.1", self.port, keepalive=60)
        return c

    def _on_status(self, client, userdata, msg) -> None:  # type: ignore[no-untyped-def]
        with contextlib.suppress(ValueError):
            if json.loads(msg.payload).get("status") == "online":
                self.agg_online.set()

    def _on_incident(self, client, userdata, msg) -> None:  # type: ignore[no-untyped-def]
        if not msg.topic.startswith(topic("incidents", "")):
            return
        with contextlib.suppress(ValueError):
            d = json.loads(msg.payload)
            with self.cond:
                self.incidents.append((time.perf_counter(), d))
                self.cond.notify_all()

    def folded(self) -> int:
        """Samples the aggregator has folded in, from its ``rankwatch_step`` gauges (steps are 1..n per rank)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/metrics", timeout=10) as r:
                text = r.read().decode()
        except OSError:
            return -1
        return int(sum(float(m.group(1)) for m in re.finditer(r'^rankwatch_step\{[^}]*\} (\S+)$', text, re.M)))

    def dropped(self) -> dict[str, float]:
        """The aggregator's ``rankwatch_dropped_total`` counters, by reason."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/metrics", timeout=10) as r:
                text = r.read().decode()
        except OSError:
            return {}
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r'^rankwatch_dropped_total\{reason="([^"]*)"\} (\S+)$', text, re.M)}

    def publish_sample(self, rank: int) -> None:
        self.step[rank] += 1
        node = rank // self.per_node
        self.sidecars[node].publish(topic("findings", str(rank)), sample_payload(rank, node, self.step[rank]), qos=1)

    def probe(self, timeout: float = 20.0) -> float | None:
        """A cuda_oom on a fresh rank, then the timeouts of two others: ms until an incident names that rank."""
        r = self.probe_rank
        self.probe_rank += self.per_node + 1
        node = r // self.per_node
        step = max(1, self.step[r])
        with self.cond:
            start = len(self.incidents)
        t0 = time.perf_counter()
        self.sidecars[node].publish(topic("findings", str(r)),
                                    match_payload(r, node, step, "cuda_oom", OOM.format(r=r, g=r % 8), f"f{r:07x}{step:08x}"), qos=1)
        for other in ((r + 1) % self.ranks, (r + 2) % self.ranks):
            on = other // self.per_node
            self.sidecars[on].publish(topic("findings", str(other)), match_payload(
                other, on, step, "collective_timeout", TIMEOUT.format(r=other), f"e{other:07x}{r:08x}"), qos=1)
        deadline = t0 + timeout
        with self.cond:
            seen = start
            while True:
                for t, d in self.incidents[seen:]:
                    named = [(d.get("initiator") or {}).get("rank")] + [c.get("rank") for c in d.get("collateral") or []]
                    if r in named:
                        return (t - t0) * 1000
                seen = len(self.incidents)
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def run_phase(self, rate: int, seconds: float, probes: int, drain: float) -> Phase:
        ph = Phase(rate, seconds, load=(os.getloadavg()[0], 0.0))
        base = self.folded()
        a_cpu0, _ = proc_usage(self.agg.pid)
        b_cpu0, _ = proc_usage(self.broker.pid)
        t0 = time.perf_counter()
        tick = 0.01
        probe_at = [t0 + seconds * (i + 1) / (probes + 1) for i in range(probes)]
        rank = 0
        owed = 0.0
        probing: list[threading.Thread] = []
        while (now := time.perf_counter()) < t0 + seconds:
            owed = rate * (now - t0) - ph.published
            for _ in range(int(owed)):
                self.publish_sample(rank)
                rank = (rank + 1) % self.ranks
                ph.published += 1
            if probe_at and now >= probe_at[0]:
                probe_at.pop(0)
                th = threading.Thread(target=self._probe_into, args=(ph,), daemon=True)
                th.start()
                probing.append(th)
            time.sleep(tick)
        elapsed = time.perf_counter() - t0
        ph.seconds = elapsed
        a_cpu1, rss = proc_usage(self.agg.pid)
        b_cpu1, _ = proc_usage(self.broker.pid)
        ph.agg_cpu_pct = 100 * (a_cpu1 - a_cpu0) / elapsed
        ph.broker_cpu_pct = 100 * (b_cpu1 - b_cpu0) / elapsed
        ph.agg_rss_mb = rss
        ph.folded_at_end = self.folded() - base
        ph.backlog_at_end = ph.published - ph.folded_at_end
        t1 = time.perf_counter()
        while time.perf_counter() - t1 < drain:
            if self.folded() - base >= ph.published:
                ph.drain_s = time.perf_counter() - t1
                break
            time.sleep(0.5)  # a scrape of 4096 ranks' gauges is not free for the aggregator
        ph.load = (ph.load[0], os.getloadavg()[0])
        for th in probing:
            th.join()
        return ph

    def _probe_into(self, ph: Phase) -> None:
        ms = self.probe()
        if ms is None:
            ph.probes_lost += 1
        else:
            ph.latencies_ms.append(ms)

    def close(self) -> None:
        for c in [*set(self.sidecars), self.observer]:
            with contextlib.suppress(Exception):
                c.disconnect()
                c.loop_stop()
        for p in (self.agg, self.broker):
            p.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(10)
            if p.poll() is None:
                p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fleet", description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=512)
    ap.add_argument("--ranks-per-node", type=int, default=8)
    ap.add_argument("--connections", type=int, default=200, help="MQTT connections the nodes share (at most one per node)")
    ap.add_argument("--rates", default="1000,2000,4000,8000,16000", help="offered messages/s, one phase each")
    ap.add_argument("--seconds", type=float, default=15.0, help="length of a phase")
    ap.add_argument("--probes", type=int, default=5, help="findings injected per phase (latency)")
    ap.add_argument("--drain", type=float, default=20.0, help="seconds a backlog may take to drain")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "results" / "fleet.json")
    a = ap.parse_args(argv)
    if not shutil.which("mosquitto") and not Path("/usr/sbin/mosquitto").exists():
        print("mosquitto is not installed (make debs)")
        return 0
    check_payloads()
    fleet = Fleet(a.nodes, a.ranks_per_node, a.connections)
    phases: list[Phase] = []
    try:
        # one sample of every rank first: the aggregator learns the ranks
        t0 = time.perf_counter()
        for r in range(fleet.ranks):
            fleet.publish_sample(r)
        while fleet.folded() < fleet.ranks and time.perf_counter() - t0 < 300:
            time.sleep(1.0)
        if (n := fleet.folded()) < fleet.ranks:
            raise SystemExit(f"warm-up: the aggregator folded in {n} of {fleet.ranks} samples in 300 s; "
                             f"its drop counters: {fleet.dropped()}")
        print(f"# {a.nodes} nodes x {a.ranks_per_node} ranks = {fleet.ranks} ranks over {fleet.connections} MQTT connections; "
              f"mosquitto on 127.0.0.1:{fleet.port}; warm-up: one sample per rank folded in "
              f"{time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs")
        print(f"{'offered/s':>10}{'sustained/s':>13}{'backlog':>9}{'drain s':>9}{'p50 ms':>8}{'p99 ms':>8}{'lost':>6}"
              f"{'agg CPU':>9}{'agg RSS':>10}{'broker CPU':>12}{'load':>12}")
        for rate in (int(x) for x in a.rates.split(",")):
            ph = fleet.run_phase(rate, a.seconds, a.probes, a.drain)
            phases.append(ph)
            drain = f"{ph.drain_s:.1f}" if ph.drain_s is not None else f">{a.drain:g}"
            print(f"{ph.published / ph.seconds:>10.0f}{ph.sustained:>13.0f}{ph.backlog_at_end:>9}{drain:>9}"
                  f"{pct(ph.latencies_ms, 0.5):>8.0f}{pct(ph.latencies_ms, 0.99):>8.0f}{ph.probes_lost:>6}"
                  f"{ph.agg_cpu_pct:>8.0f}%{ph.agg_rss_mb:>7.0f} MB{ph.broker_cpu_pct:>11.0f}%"
                  f"{ph.load[0]:>6.1f}->{ph.load[1]:.1f}", flush=True)
            if ph.drain_s is None:
                print(f"# breaks at {rate}/s offered: the backlog did not drain in {a.drain:g} s")
                break
    finally:
        fleet.close()
    a.results.parent.mkdir(parents=True, exist_ok=True)
    a.results.write_text(json.dumps({"nodes": a.nodes, "ranks": a.nodes * a.ranks_per_node, "phases": [
        {"offered": p.published / p.seconds, "sustained": p.sustained, "backlog": p.backlog_at_end, "drain_s": p.drain_s,
         "latency_ms": p.latencies_ms, "p50_ms": pct(p.latencies_ms, 0.5) if p.latencies_ms else None,
         "probes_lost": p.probes_lost, "agg_cpu_pct": p.agg_cpu_pct, "agg_rss_mb": p.agg_rss_mb,
         "broker_cpu_pct": p.broker_cpu_pct, "load": p.load, "median_latency_ms": statistics.median(p.latencies_ms)
         if p.latencies_ms else None} for p in phases]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
