"""Daemon configuration: a YAML/TOML file, ``RANKWATCH_*`` environment variables and CLI
flags, in increasing order of precedence (flags win), read by pydantic-settings' own
sources; nested settings merge field by field (``RANKWATCH_LIMITS__MAX_FILES`` overrides
the file's ``limits.max_files`` and nothing else). A ``RANKWATCH_*`` variable that names
no setting is an error, as is a file that is not UTF-8, not YAML/TOML, or not a mapping.

Invalid configuration never starts the daemon: ``load_config`` raises ``ConfigError``
with one readable message naming the field (``metrics_addr: port must be 1-65535``),
and the CLI exits with status 2.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
    YamlConfigSettingsSource,
)

from monitor.stacks import StackSettings

__all__ = ["DEFAULT_METRICS_ADDR", "ConfigError", "Limits", "Settings", "load_config"]

# Prometheus' list of default exporter ports fills 9100-9999, so rankwatch stays out of it.
DEFAULT_METRICS_ADDR = "127.0.0.1:19470"


class ConfigError(ValueError):
    """Invalid configuration; the message names the field."""


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_files: int = Field(4096, ge=1, description="files tailed at once; more are counted as dropped")
    max_line_bytes: int = Field(1 << 20, ge=1024, description="longer lines are cut (the cut is counted)")
    max_ranks: int = Field(65536, ge=1, description="distinct rank label values exported")
    read_chunk_bytes: int = Field(1 << 20, ge=4096, description="bytes read (and scanned, off the event loop) per file per turn; /metrics waits at most one turn")


class Settings(BaseSettings):
    """Everything ``rankwatch run`` can be told. Defaults need no config file at all."""

    model_config = SettingsConfigDict(env_prefix="RANKWATCH_", extra="forbid", env_nested_delimiter="__")

    logs: list[str] = Field(default_factory=lambda: ["./**/*.log"], description="glob patterns of the per-rank logs")
    job: str = Field("job", min_length=1, max_length=200, description="job name (metric label, MQTT topic)")
    metrics_addr: str = Field(DEFAULT_METRICS_ADDR, description="HOST:PORT for /metrics, /healthz, /api/incidents")
    allow_hosts: list[str] = Field(default_factory=list, description="Host names the live page answers to besides "
                                   "localhost, IP addresses and `host` (DNS rebinding protection)")
    state_dir: Path = Field(Path(".rankwatch"), description="checkpoint directory")
    rescan_interval: float = Field(2.0, gt=0, le=3600, description="seconds between glob rescans (the source of truth)")
    poll_interval: float = Field(0.25, gt=0, le=60, description="seconds between reads when inotify gives no hint")
    inotify: bool = Field(True, description="use watchdog (inotify) events as hints")
    checkpoint_interval: float = Field(5.0, gt=0, description="seconds between checkpoints (longer when a checkpoint takes more than 1/20 of it: a large job's state)")
    close_after: float = Field(300.0, gt=0, description="an incident with no new evidence for this long is closed")
    stall_factor: float = Field(5.0, gt=1, description="a job is stalled after this many median step times without progress")
    stall_floor: float = Field(60.0, gt=0, description="never call a stall before this many seconds")
    mqtt: str | None = Field(None, repr=False, description="mqtt://[user:pass@]host:1883 or mqtts://... of a broker")
    mqtt_cafile: Path | None = Field(None, description="CA bundle for mqtts:// (default: the system's)")
    mqtt_outbox: int = Field(50_000, ge=10, description="events kept while the broker is unreachable")
    mqtt_keepalive: int = Field(10, ge=1, le=3600, description="seconds; the broker announces this node offline after 1.5x")
    aggregate: bool = Field(False, description="also correlate the whole job from the broker and publish its incidents")
    host: str = Field(default_factory=lambda: __import__("socket").gethostname(), min_length=1,
                      description="this node's name in MQTT topics and client id")
    console: bool = Field(True, description="print findings and incidents on the console")
    webhook: str | None = Field(None, repr=False, description="http(s) URL: each incident change is POSTed there as JSON (Slack-compatible)")
    webhook_format: Literal["json", "slack"] = Field("json", description="json: text + incident; slack: text only")
    log_format: Literal["text", "json"] = Field("text", description="the daemon's log lines: text, or one JSON object per line")
    limits: Limits = Field(default_factory=lambda: Limits.model_validate({}))
    stacks: StackSettings = Field(default_factory=lambda: StackSettings.model_validate({}),
                                  description="live stacks of the ranks on a stall (py-spy)")

    @field_validator("metrics_addr")
    @classmethod
    def _addr(cls, v: str) -> str:
        m = re.fullmatch(r"(?P<host>\[[0-9a-fA-F:]+\]|[\w.-]*):(?P<port>\d+)", v)
        if not m:
            raise ValueError("must be HOST:PORT (e.g. 127.0.0.1:19470)")
        if not 0 <= int(m.group("port")) <= 65535:
            raise ValueError("port must be 0-65535")
        return v

    @field_validator("logs")
    @classmethod
    def _logs(cls, v: list[str]) -> list[str]:
        if any(not p.strip() for p in v):
            raise ValueError("globs must not be empty")
        return v

    @field_validator("mqtt")
    @classmethod
    def _mqtt(cls, v: str | None) -> str | None:
        if v is not None:
            from monitor.mqtt import parse_url

            parse_url(v)
        return v

    @field_validator("webhook")
    @classmethod
    def _webhook(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", v):
            raise ValueError("must be an http:// or https:// URL")
        return v

    def safe_dump(self) -> dict[str, Any]:
        """Settings for logs and /healthz: secrets (the broker password) masked."""
        from monitor.mqtt import parse_url

        d = self.model_dump(mode="json")
        if self.mqtt:
            d["mqtt"] = parse_url(self.mqtt).safe()
        if self.webhook:
            d["webhook"] = "***"  # a webhook URL is its own credential
        return d

    @property
    def host_port(self) -> tuple[str, int]:
        host, _, port = self.metrics_addr.rpartition(":")
        return host.strip("[]") or "127.0.0.1", int(port)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # flags (init) > environment > file > defaults; nested settings merge field by field
        # (RANKWATCH_LIMITS__MAX_FILES beats the file's limits.max_files, and keeps its other limits)
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        cfg = settings_cls.model_config
        if cfg.get("toml_file"):
            sources.append(TomlConfigSettingsSource(settings_cls))
        elif cfg.get("yaml_file"):
            sources.append(YamlConfigSettingsSource(settings_cls))
        return tuple(sources)


ENV_PREFIX = "RANKWATCH_"


def _check_env() -> None:
    """Every ``RANKWATCH_*`` variable must name a setting: a typo is an error, not a no-op."""
    nested = {name: f.annotation for name, f in Settings.model_fields.items()}
    for key in sorted(os.environ):
        if not key.startswith(ENV_PREFIX):
            continue
        head, _, rest = key[len(ENV_PREFIX):].lower().partition("__")
        if head not in nested:
            raise ConfigError(f"{key}: unknown setting (see 'rankwatch run --help' and the README)")
        if rest:
            sub = nested[head]
            if not (isinstance(sub, type) and issubclass(sub, BaseModel)) or rest not in sub.model_fields:
                raise ConfigError(f"{key}: unknown setting")


def _check_file(path: Path) -> None:
    """The file exists, is UTF-8 and holds a mapping: one message otherwise."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path}: not UTF-8 text (byte {exc.start})") from None
    kind = "TOML" if path.suffix == ".toml" else "YAML"
    import yaml  # only for a YAML config file: a sidecar without one does not load it (RSS)

    try:
        data = tomllib.loads(text) if kind == "TOML" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"config file {path}: not valid {kind}: {exc}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"config file {path}: must be a mapping of settings, got {type(data).__name__}")


def _message(exc: ValidationError) -> str:
    e = exc.errors()[0]
    loc = ".".join(str(p) for p in e["loc"]) or "config"
    msg = e["msg"].removeprefix("Value error, ")
    if e["type"] == "extra_forbidden":
        msg = "unknown setting"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{loc}: {msg}{more}"


def _settings_error(exc: SettingsError) -> str:
    """pydantic-settings' 'error parsing value for field "logs" from source ...' as one line."""
    m = re.search(r'field "([^"]+)"', str(exc))
    field = m.group(1) if m else "config"
    example = _JSON_EXAMPLES.get(field, "")
    return f"{ENV_PREFIX}{field.upper()}: must be JSON" + (f", e.g. {ENV_PREFIX}{field.upper()}='{example}'" if example else "")


_JSON_EXAMPLES = {"logs": '["/logs/**/*.log"]', "limits": '{"max_files": 1024}'}


def load_config(config_file: str | None = None, **flags: Any) -> Settings:
    """File < environment < flags. ``flags`` with value None are not given."""
    _check_env()
    given = {k: v for k, v in flags.items() if v is not None and v != [] and v != ()}
    cls: type[Settings] = Settings
    if config_file:
        path = Path(config_file)
        _check_file(path)
        key = "toml_file" if path.suffix == ".toml" else "yaml_file"

        class FromFile(Settings):
            model_config = SettingsConfigDict(**{key: path})  # type: ignore[typeddict-item,misc]

        cls = FromFile
    try:
        return cls(**given)
    except ValidationError as exc:
        raise ConfigError(_message(exc)) from None
    except SettingsError as exc:
        raise ConfigError(_settings_error(exc)) from None
