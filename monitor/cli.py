"""The ``rankwatch`` command line.

Exit codes: 0 success; 2 bad usage or unreadable input (missing path, nothing to read);
3 ``--fail-on`` matched a failure in the diagnosis; 1 ``check`` found an error in the config.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detectors.catalog import CatalogError, entry_to_dict, load_catalog
from monitor.diagnose import default_jobs, diagnose_paths, diagnose_stream
from monitor.inputs import InputError
from monitor.report.escape import terminal

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["app", "main"]

app = typer.Typer(
    name="rankwatch",
    help="Find the initiating failure and rank of a distributed training job from its logs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
catalog_app = typer.Typer(help="Browse the failure catalog offline.", no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")



def _err() -> Console:
    """stderr through rich, made on first use (the sidecar does not load rich: its RSS)."""
    global _ERR
    if _ERR is None:
        from rich.console import Console

        _ERR = Console(stderr=True)
    return _ERR


_ERR: Console | None = None


class LogFormat(StrEnum):
    text = "text"
    json = "json"


class Format(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


def _say(msg: str, prefix: str = "rankwatch:", style: str = "bold red") -> None:
    """One line on stderr: outside text in ``msg`` is shown as itself (never markup, never wrapped)."""
    from rich.text import Text

    _err().print(Text.assemble((prefix, style), " ", terminal(msg)), highlight=False, soft_wrap=True)


def _fail(msg: str, code: int = 2) -> typer.Exit:
    _say(msg)
    return typer.Exit(code)


@app.command()
def diagnose(
    paths: Annotated[list[str], typer.Argument(help="Log directories (searched recursively), files, or '-' for standard input.")],
    format: Annotated[Format | None, typer.Option("--format", "-f", help="text (default on a terminal), json or markdown.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report to this file.")] = None,
    fail_on: Annotated[list[str] | None, typer.Option("--fail-on", help="Exit 3 when a failure with this catalog id is found (repeatable).")] = None,
    job: Annotated[str | None, typer.Option("--job", help="Job name in the report (default: the directory name).")] = None,
    baseline: Annotated[list[str] | None, typer.Option("--baseline", help="Logs of a baseline run of the same job (e.g. fp32) to compare speed, eval loss and memory with (repeatable).")] = None,
    expect_speedup: Annotated[float | None, typer.Option("--expect-speedup", min=0.01, help="Speed-up over --baseline the mixed-precision run should reach (default 1.15).")] = None,
    redact: Annotated[bool, typer.Option("--redact", help="Also replace host names, user names, IPs and absolute paths by placeholders (secrets are always redacted).")] = False,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Worker processes parsing files in parallel (default: one per CPU; 1 = none). The report is the same for any value.")] = None,
) -> None:
    """Diagnose a finished (or running) job's logs: initiating failure, rank, step, root cause, fix."""
    catalog = load_catalog()
    for fid in fail_on or []:
        if fid not in catalog:
            raise _fail(f"--fail-on: unknown failure id {fid!r} (see 'rankwatch catalog list')")
    try:
        if paths == ["-"]:
            result = diagnose_stream(sys.stdin.buffer, job=job, baseline=baseline, expect_speedup=expect_speedup)
        else:
            result = diagnose_paths(paths, job=job, baseline=baseline, expect_speedup=expect_speedup,
                                    jobs=jobs or default_jobs())
    except InputError as exc:
        raise _fail(str(exc)) from None
    if paths != ["-"] and not result.files:
        for note in result.notes:
            _say(note, "note:", "")
        raise _fail(f"no readable log files in {', '.join(paths)}")
    from monitor.report.html import render_report_html

    report = result.report
    if redact:
        from detectors.redact import redact as redact_report

        report = redact_report(report, bundle=True)
    fmt = format or (Format.text if (output is None and sys.stdout.isatty()) else Format.json)
    if fmt is Format.json:
        text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    elif fmt is Format.markdown:
        from monitor.report.markdown import render_markdown

        text = render_markdown(report)
    elif fmt is Format.html:
        text = render_report_html(report, result.state)
    else:
        text = ""
    if fmt is Format.text:
        from rich.console import Console  # rich only for the text report (start-up of a JSON run)

        from monitor.report.text import render_text
    if output is not None:
        if fmt is Format.text:
            with output.open("w", encoding="utf-8") as fh:
                render_text(report, Console(file=fh, width=120, force_terminal=False))
        else:
            output.write_text(text, encoding="utf-8")
    elif fmt is Format.text:
        render_text(report, Console())
    else:
        sys.stdout.write(text)
    found = {i["failure"] for i in report["incidents"]}
    hit = sorted(found & set(fail_on or []))
    if hit:
        _err().print(f"rankwatch: found {', '.join(hit)} (--fail-on)", highlight=False)
        raise typer.Exit(3)


@catalog_app.command("list")
def catalog_list(
    format: Annotated[Format, typer.Option("--format", "-f", help="text or json.")] = Format.text,
) -> None:
    """List every failure the catalog knows."""
    catalog = load_catalog()
    if format is Format.json:
        sys.stdout.write(json.dumps([entry_to_dict(e) for e in catalog], indent=2, ensure_ascii=False) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "category", "role", "severity", "hw", "title")
    for e in sorted(catalog, key=lambda e: (e.category, e.id)):
        table.add_row(e.id, e.category, e.role, e.severity, "yes" if e.hardware else "no", e.title)
    Console(width=160).print(table)


@catalog_app.command("show")
def catalog_show(
    failure_id: Annotated[str, typer.Argument(help="A catalog id, e.g. amp_bf16_vs_fp16.")],
    format: Annotated[Format, typer.Option("--format", "-f", help="text, json or markdown.")] = Format.text,
) -> None:
    """Show one catalog entry in full: mechanism, symptoms, root causes, fixes, verify."""
    catalog = load_catalog()
    if failure_id not in catalog:
        raise _fail(f"unknown failure id {failure_id!r}; known: {', '.join(sorted(e.id for e in catalog))}")
    e = catalog[failure_id]
    if format is Format.json:
        sys.stdout.write(json.dumps(entry_to_dict(e), indent=2, ensure_ascii=False) + "\n")
        return
    from monitor.report.entry import render_entry

    text = render_entry(e)
    if format is Format.markdown:
        sys.stdout.write(text)
    else:
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))


@app.command()
def run(
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML or TOML settings file.")] = None,
    logs: Annotated[list[str] | None, typer.Option("--logs", help="Glob of per-rank logs (repeatable), e.g. '/logs/**/*.log'.")] = None,
    job: Annotated[str | None, typer.Option("--job", help="Job name (metric label).")] = None,
    metrics_addr: Annotated[str | None, typer.Option("--metrics-addr", help="HOST:PORT for /metrics, /healthz, /api/incidents.")] = None,
    mqtt: Annotated[str | None, typer.Option("--mqtt", help="mqtt://host:port of a broker.")] = None,
    state_dir: Annotated[Path | None, typer.Option("--state-dir", help="Checkpoint directory.")] = None,
    aggregate: Annotated[bool, typer.Option("--aggregate", help="Also correlate the whole job from the broker (needs --mqtt).")] = False,
    host: Annotated[str | None, typer.Option("--host", help="This node's name in MQTT topics (default: hostname).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No per-finding console output.")] = False,
    log_format: Annotated[LogFormat | None, typer.Option("--log-format", help="Daemon log lines: text (default) or json (one object per line, for log shippers).")] = None,
    webhook: Annotated[str | None, typer.Option("--webhook", help="POST each incident change as JSON to this http(s) URL (Slack-compatible).")] = None,
) -> None:
    """Follow every rank's log live: findings and incidents on the console, Prometheus /metrics."""
    from monitor.config import ConfigError, load_config

    try:
        cfg = load_config(str(config) if config else None, logs=logs, job=job, metrics_addr=metrics_addr,
                          mqtt=mqtt, state_dir=state_dir, console=False if quiet else None,
                          aggregate=True if aggregate else None, host=host,
                          log_format=log_format.value if log_format else None, webhook=webhook)
    except ConfigError as exc:
        raise _fail(f"invalid configuration: {exc}") from None
    if cfg.aggregate and not cfg.mqtt:
        raise _fail("invalid configuration: aggregate: needs mqtt (the broker is where the nodes' findings meet)")
    _serve(cfg)


def _serve(cfg: Any) -> None:
    import asyncio

    from monitor.daemon import Daemon
    from monitor.daemonlog import setup as setup_logging

    log = setup_logging(cfg.log_format)
    out = None
    if cfg.console:
        from monitor.console import LiveConsole  # rich: not loaded by a quiet sidecar (its RSS)

        out = LiveConsole()
    daemon = Daemon(cfg, on_change=out.change if out else None, on_finding=out.finding if out else None, log=log.info)
    from monitor.checkpoint import StateDirError

    try:
        asyncio.run(daemon.run())
    except StateDirError as exc:
        raise _fail(f"invalid configuration: state_dir: {exc}") from None
    except OSError as exc:
        raise _fail(f"cannot start: {exc.strerror or exc} ({cfg.metrics_addr})") from None


@app.command()
def serve(
    addr: Annotated[str, typer.Option("--addr", help="HOST:PORT to listen on (loopback by default; port 0 picks a free one).")] = "127.0.0.1:19480",
    allow_host: Annotated[list[str] | None, typer.Option("--allow-host", help="Also accept this Host name (DNS rebinding protection refuses other names; repeatable).")] = None,
    max_bytes: Annotated[int, typer.Option("--max-bytes", min=1, help="Largest upload accepted, in bytes, all files together (held in memory only).")] = 256 << 20,
) -> None:
    """A page on this machine: paste a log or drop files or a whole log folder, read the diagnosis."""
    import asyncio

    from monitor.web.serve import ServeOptions, run_server

    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise _fail(f"--addr: expected HOST:PORT, got {addr!r}")
    opts = ServeOptions(host=host.strip("[]") or "127.0.0.1", port=int(port), allow_hosts=allow_host or [],
                        max_bytes=max_bytes)
    try:
        asyncio.run(run_server(opts, log=lambda m: print(m, flush=True)))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        raise _fail(f"cannot start: {exc.strerror or exc} ({addr})") from None


@app.command()
def aggregate(
    mqtt: Annotated[str, typer.Option("--mqtt", help="mqtt://host:port of the broker the sidecars publish to.")],
    job: Annotated[str, typer.Option("--job", help="Job name (as the sidecars were started).")],
    metrics_addr: Annotated[str | None, typer.Option("--metrics-addr", help="HOST:PORT for /metrics and /api/incidents.")] = None,
    state_dir: Annotated[Path | None, typer.Option("--state-dir", help="Checkpoint directory.")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML or TOML settings file.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No console output per incident.")] = False,
    log_format: Annotated[LogFormat | None, typer.Option("--log-format", help="Daemon log lines: text (default) or json.")] = None,
    webhook: Annotated[str | None, typer.Option("--webhook", help="POST each incident change as JSON to this http(s) URL (Slack-compatible).")] = None,
) -> None:
    """Correlate a multi-node job from the broker: one incident naming the initiating rank, published back."""
    from monitor.config import ConfigError, load_config

    try:
        cfg = load_config(str(config) if config else None, logs=[], job=job, metrics_addr=metrics_addr, mqtt=mqtt,
                          state_dir=state_dir, aggregate=True, console=False if quiet else None,
                          log_format=log_format.value if log_format else None, webhook=webhook)
    except ConfigError as exc:
        raise _fail(f"invalid configuration: {exc}") from None
    cfg.logs = []
    _serve(cfg)


@app.command()
def check(
    config: Annotated[Path, typer.Argument(help="DeepSpeed JSON, HF TrainingArguments JSON/YAML, accelerate YAML, Megatron/fairseq arguments file, or Lightning YAML.")],
    gpu: Annotated[str | None, typer.Option("--gpu", help="GPU model (e.g. 'NVIDIA A100-SXM4-80GB') or compute capability (e.g. 7.5); default: nvidia-smi.")] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="text or json.")] = Format.text,
) -> None:
    """Preflight: check a training config's precision settings against the GPU (exit 1 on errors)."""
    from monitor.check import CheckError, render_check_text, run_check

    try:
        res = run_check(config, gpu=gpu)
    except CheckError as exc:
        _say(str(exc))  # one line: paths stay whole
        raise typer.Exit(2) from None
    if format is Format.json:
        sys.stdout.write(json.dumps(res.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_check_text(res))
    if res.preflight.errors:
        raise typer.Exit(1)


@app.command()
def stacks(
    pattern: Annotated[str | None, typer.Option("--pattern", help="Regex on the command line of the rank processes (default: every process with RANK/LOCAL_RANK in its environment).")] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="text or json.")] = Format.text,
    py_spy: Annotated[str, typer.Option("--py-spy", help="The py-spy executable.")] = "py-spy",
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per process.")] = 5.0,
) -> None:
    """Sample every local rank's stack now (py-spy) and print them grouped, the odd rank out first."""
    from monitor.stacks import Sampler, StackSettings, render_stacks, stacks_json

    try:
        settings = StackSettings.model_validate({"pattern": pattern, "py_spy": py_spy, "timeout": timeout})
    except ValueError as exc:
        raise _fail(f"--pattern: {exc}") from None
    sample = Sampler(settings).sample()
    if format is Format.json:
        sys.stdout.write(json.dumps(stacks_json(sample), indent=2, ensure_ascii=False) + "\n")
    elif not sample.problem:
        sys.stdout.write(render_stacks(sample))
    if sample.problem:
        _err().print(f"rankwatch: {sample.problem}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)


@app.command()
def generate(
    root: Annotated[Path, typer.Option("--root", help="Repository root to write into.")] = Path("."),
    runbook_url: Annotated[str | None, typer.Option("--runbook-url", help="Base URL of docs/runbooks/ for alert runbook_url annotations.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Write nothing; exit 1 if a generated file is out of date.")] = False,
    scrape_job: Annotated[str | None, typer.Option("--scrape-job", help="Prometheus scrape job of the sidecars (default: rankwatch).")] = None,
) -> None:
    """Regenerate alert/recording rules, promtool tests, runbooks and Grafana dashboards from the catalog."""
    from monitor.kit import run as generate_kit

    raise typer.Exit(generate_kit(root, runbook_url=runbook_url, check=check, scrape_job=scrape_job))


@app.command("eval")
def eval_corpus(
    corpus: Annotated[Path, typer.Argument(help="A directory of cases: folders holding a case.json and the log files beside it.")],
    format: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    min_accuracy: Annotated[float | None, typer.Option("--min-accuracy", help="Exit 1 when overall accuracy is below this fraction (a regression guard).")] = None,
    min_class_accuracy: Annotated[float | None, typer.Option("--min-class-accuracy", help="Exit 1 when a class with >= 5 cases is below this fraction.")] = None,
) -> None:
    """Score the engine on a corpus of labelled log excerpts: per-class accuracy and every miss."""
    from monitor.evaluate import as_json, evaluate, render

    if not corpus.is_dir():
        raise _fail(f"{corpus}: not a directory")
    res = evaluate(corpus)
    if not res.results:
        why = "; ".join(res.errors[:3]) + (f" (and {len(res.errors) - 3} more)" if len(res.errors) > 3 else "")
        raise _fail(f"{corpus}: no readable case: {why}" if res.errors else f"{corpus}: no case.json found")
    sys.stdout.write((as_json(res) if format == "json" else render(res)) + "\n")
    low = (min_accuracy is not None and res.accuracy < min_accuracy) or (
        min_class_accuracy is not None and res.min_class_accuracy() < min_class_accuracy)
    raise typer.Exit(1 if low else 0)


@app.command()
def demo(
    serve: Annotated[float, typer.Option("--serve", help="Keep serving /metrics this many seconds after the replay.")] = 0.0,
    speed: Annotated[float, typer.Option("--delay", help="Seconds between replayed lines.")] = 0.02,
) -> None:
    """Replay a bundled real incident while the daemon watches it live (no servers needed)."""
    from monitor.demo import run_demo

    raise typer.Exit(run_demo(delay=speed, serve=serve))


def main() -> None:
    from monitor.scancache import install

    install()  # compiled scan databases are reused between runs
    try:
        app()
    except CatalogError as exc:
        _say(f"invalid failure catalog: {exc}")
        sys.exit(2)


if __name__ == "__main__":
    main()
