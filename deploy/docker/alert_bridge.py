"""A stand-in for the pager and ticket systems of deploy/alertmanager/alertmanager.yml.

    python alert_bridge.py [--host 0.0.0.0] [--port 9095]

Alertmanager's webhook receivers POST to ``http://alert-bridge:9095/<page|ticket>/<team>``;
this prints one line per alert (receiver path, status, alert name, job, failure,
initiating rank, summary) so the docker-compose stack shows where each alert would go.
Standard library only; tests/integration use ``serve()`` as their webhook receiver.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["serve"]

Notification = dict[str, Any]


def serve(host: str, port: int, on_notification: Callable[[str, Notification], None]) -> ThreadingHTTPServer:
    """Start a webhook receiver in a daemon thread; ``server.shutdown()`` stops it."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                payload = json.loads(body)
            except ValueError:
                self.send_response(400)
                self.end_headers()
                return
            on_notification(self.path, payload)
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per alert instead
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="alert-bridge", daemon=True).start()
    return server


def _print(path: str, payload: Notification) -> None:
    for a in payload.get("alerts", []):
        lab, ann = a.get("labels", {}), a.get("annotations", {})
        rank = lab.get("initiator_rank", "-")
        print(f"{path}  {a.get('status', '?'):8}  {lab.get('alertname', '?')}  job={lab.get('job', '-')}  "
              f"failure={lab.get('failure', '-')}  rank={rank}  {ann.get('summary', '')}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=9095)
    a = ap.parse_args(argv)
    server = serve(a.host, a.port, _print)
    print(f"alert-bridge: listening on {a.host}:{a.port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
