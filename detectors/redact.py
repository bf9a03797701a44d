"""Make a report safe to share: secrets always, identities on request. Pure, no I/O.

Every output that leaves the machine — the ``diagnose`` report (JSON, Markdown, text,
HTML), ``/api/incidents``, published incidents — quotes log lines as evidence, and log
lines carry what the process printed: tokens in tracebacks, keys in environment dumps,
passwords in URLs. ``redact(obj)`` walks any JSON-like value (dicts, lists, strings) and
returns a copy whose strings have their secrets replaced by ``[REDACTED:<kind>]``:

- tokens by shape: Hugging Face ``hf_…``/``api_org_…``, GitHub ``ghp_…``/``gho_…``/
  ``github_pat_…``, AWS access key ids ``AKIA…``/``ASIA…``, OpenAI ``sk-…``, Slack
  ``xox?-…``, Google ``AIza…``, JSON web tokens;
- values by name: ``password=…``, ``passwd: …``, ``token=…``, ``HF_TOKEN=…``,
  ``aws_secret_access_key = …``, ``"api_key": "…"`` and every ``<anything>_(password|
  secret|token|api_key|…)`` key, unless the value is a plain number;
- ``Authorization: Bearer …`` / ``Basic …`` / ``token …``;
- the password of a URL with credentials (``https://user:pass@host``);
- short password keys (``pass=``, ``PGPASS=``, ``MYSQL_PWD=``), a flag followed by its
  secret (``--password X``, ``--api-key X``, ``--token X``) and ``mysql -pX``;
- PEM private key blocks (``-----BEGIN … PRIVATE KEY-----`` to its END line, or to the
  end of the string when the block is cut).

``redact(obj, bundle=True)`` also anonymises who and where, for a bundle sent outside the
team: host names (NCCL ``host:pid:tid`` prefixes, torchrun's ``host :``, ``hostname=``,
URL hosts, ``user@host``, fully qualified names), IPv4 addresses, user names (home
directories, ``user@host``, ``USER=``) and absolute paths (a home directory keeps its
layout under ``/home/user-N``; another absolute path keeps only its file name, or what
follows ``site-packages/``). Placeholders are consistent within one call: the same
name gets the same ``host-N`` / ``user-N`` / ``ip-N`` / ``/path-N`` everywhere, numbered
in order of first appearance. Only strings under log-derived keys (``BUNDLE_KEYS``:
evidence text and paths, root causes, notes) are anonymised; catalog text is not.

Every pattern is linear-time (no nested quantifiers); the inputs are evidence lines,
already capped in length by the parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["BUNDLE_KEYS", "Anonymizer", "redact", "redact_text"]

# ---------------------------------------------------------------------- secrets
_TOKENS: list[tuple[str, re.Pattern[str]]] = [
    ("hf-token", re.compile(r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA)[0-9A-Z]{16}\b")),
    ("openai-key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
]
_PEM = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|.*\Z)", re.S)
_AUTH = re.compile(r"(?i)\b(authorization[\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|token|digest)\s+)?([^\s\"',;]+)")
_BEARER = re.compile(r"(?i)\b(bearer)\s+([A-Za-z0-9._~+/=-]{8,})")
_URL_CRED = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://)([^\s/:@\"'<>]{0,256}):([^\s/@\"'<>]{1,256})@")
# a key whose name says it holds a secret, then = or :, then the value (quoted or not)
_SECRET_KV = re.compile(
    r"(?i)(?<![\w-])([\w.-]{0,64}?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|credentials?|auth[_-]?key)[\"']?\s*[=:]\s*)([\"']?)([^\s\"',;&}]+)"
)
# short names for a password (``pass=``, ``PGPASS=``, ``MYSQL_PWD=``): only as the whole key or its last part,
# so ``bypass``/``compass`` keep their values
_SHORT_KV = re.compile(r"(?i)(?<![\w.-])((?:[\w.-]{0,64}[_.-])?(?:pass|pwd|pgpass)[\"']?\s*[=:]\s*)([\"']?)([^\s\"',;&}]+)")
# a command-line flag that takes a secret as its next word: ``--password X``, ``--api-key X``, ``--token X``,
# also in a quoted argv list (``'--password', 'X'``)
_SECRET_FLAG = re.compile(
    r"(?i)(?<![\w-])(--?[\w-]{0,32}?(?:password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|auth[_-]?key|credentials?)(?:[\"']?,[ \t]*|[ \t]+))([\"']?)([^\s\"',;-][^\s\"',;]*)"
)
# ``mysql -pSECRET`` (and mysqldump, mysqladmin): the password glued to -p
_MYSQL_P = re.compile(r"(?i)\b(mysql\w{0,8}\b[^\n]{0,200}?[ \t]-p)([^\s-][^\s]*)")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _kv(m: re.Match[str]) -> str:
    key, quote, value = m.group(1), m.group(2), m.group(3)
    if _NUMBER.fullmatch(value) or value.startswith("[REDACTED"):
        return m.group(0)  # tokens: 128, loss_scale_token=1 ... a plain number is no secret
    return f"{key}{quote}[REDACTED:secret]"


def _auth(m: re.Match[str]) -> str:
    scheme = f"{m.group(2)} " if m.group(2) else ""
    if m.group(3).startswith("[REDACTED"):
        return m.group(0)
    return f"{m.group(1)}{scheme}[REDACTED:credentials]"


def redact_text(text: str) -> str:
    """``text`` with every secret it holds replaced (idempotent)."""
    if not text:
        return text
    out = _PEM.sub("[REDACTED:private-key]", text)
    out = _URL_CRED.sub(lambda m: m.group(0) if m.group(2).startswith("[REDACTED") else f"{m.group(1)}{m.group(2)}:[REDACTED:password]@", out)
    out = _AUTH.sub(_auth, out)
    out = _BEARER.sub(lambda m: m.group(0) if m.group(2).startswith("[REDACTED") else f"{m.group(1)} [REDACTED:credentials]", out)
    for kind, rx in _TOKENS:
        out = rx.sub(f"[REDACTED:{kind}]", out)
    out = _SECRET_KV.sub(_kv, out)
    out = _SHORT_KV.sub(_kv, out)
    out = _SECRET_FLAG.sub(_kv, out)
    return _MYSQL_P.sub(lambda m: m.group(0) if m.group(2).startswith("[REDACTED") else f"{m.group(1)}[REDACTED:secret]", out)


# ---------------------------------------------------------------------- identities (bundle mode)
BUNDLE_KEYS = frozenset({"text", "path", "root_cause", "notes", "evidence", "message", "what"})

_IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])")
_KEEP_IPS = {"127.0.0.1", "0.0.0.0", "255.255.255.255"}
_HOME = re.compile(r"(?<![\w.-])(/home/|/Users/|/data/home/)([A-Za-z_][\w.-]{0,63})(?=/|\b)")
_USER_AT = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]{0,31})@([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){0,8})\b")
_USER_KV = re.compile(r"(?i)\b((?:USER|LOGNAME|USERNAME|SUDO_USER)\s*[=:]\s*[\"']?)([A-Za-z_][\w.-]{0,31})")
_NCCL_HOST = re.compile(r"(?<![\w.-])([A-Za-z][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){0,8}):(\d+):(\d+) \[")
_HOST_KV = re.compile(r"(?i)\b((?:host(?:name)?|node(?:name)?|master_addr|MASTER_ADDR)\s*[=:]\s*[\"']?)([A-Za-z][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){0,8})\b")
_URL_HOST = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://)(?:([^\s/@\"'<>]{1,256})@)?([A-Za-z][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){0,8})\b")
_FQDN = re.compile(r"(?<![\w.@/-])([a-z][a-z0-9-]{0,62}(?:\.[a-z0-9-]{1,63}){1,8}\.(?:internal|local|lan|cluster|corp|compute|ec2|svc|intra|priv))\b")
_ABS_PATH = re.compile(r"(?<![\w.~:/-])(/(?:[\w.@%+~=-]{1,255}/){1,64})([\w.@%+~=-]{0,255})")
_SYSTEM = ("/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/etc/", "/proc/", "/sys/", "/dev/", "/opt/conda/",
           "/opt/nvidia/", "/var/lib/", "/run/", "/tmp/", "/root/", "/home/user-", "/path-")
_NOT_HOSTS = {"localhost", "http", "https", "tcp", "file", "env", "self", "none", "null", "true", "false"}
# documentation hosts quoted by error messages identify nobody: links stay usable
_PUBLIC_HOSTS = ("pytorch.org", "github.com", "githubusercontent.com", "huggingface.co", "nvidia.com", "python.org",
                 "deepspeed.ai", "lightning.ai", "readthedocs.io", "stackoverflow.com", "arxiv.org")
# common words that also happen to be user names: never replaced where they appear bare
_COMMON = {"root", "admin", "user", "users", "ubuntu", "data", "home", "test", "train", "model", "node", "worker",
           "master", "main", "local", "server", "client", "host", "debug", "info", "error", "warning", "rank"}


class Anonymizer:
    """Consistent placeholders for the hosts, users, IPs and paths of one report."""

    def __init__(self) -> None:
        self.maps: dict[str, dict[str, str]] = {"host": {}, "user": {}, "ip": {}, "path": {}}

    def _name(self, kind: str, value: str, fmt: Callable[[int], str]) -> str:
        table = self.maps[kind]
        if value not in table:
            table[value] = fmt(len(table) + 1)
        return table[value]

    def host(self, name: str) -> str:
        low = name.lower()
        if low in _NOT_HOSTS or name.startswith(("host-", "ip-")) or low.endswith(_PUBLIC_HOSTS):
            return name
        return self._name("host", name.lower(), lambda n: f"host-{n}")

    def user(self, name: str) -> str:
        if name.startswith("user-"):
            return name
        return self._name("user", name, lambda n: f"user-{n}")

    def ip(self, addr: str) -> str:
        return addr if addr in _KEEP_IPS else self._name("ip", addr, lambda n: f"ip-{n}")

    def _path(self, m: re.Match[str]) -> str:
        dirs, base = m.group(1), m.group(2)
        if m.group(0).startswith(_SYSTEM):
            return m.group(0)
        for pkg in ("/site-packages/", "/dist-packages/"):
            at = dirs.find(pkg)
            if at >= 0:
                return self._name("path", dirs[:at], lambda n: f"/path-{n}") + dirs[at:] + base
        return self._name("path", dirs.rstrip("/"), lambda n: f"/path-{n}") + "/" + base

    def _url_user(self, userinfo: str | None) -> str:
        if not userinfo:
            return ""
        name, sep, rest = userinfo.partition(":")
        return f"{self.user(name) if name and not name.startswith('[') else name}{sep}{rest}@"

    def learn(self, text: str) -> None:
        """Note the names ``text`` reveals (so a bare mention elsewhere is replaced too)."""
        for m in _HOME.finditer(text):
            self.user(m.group(2))
        for m in _USER_AT.finditer(text):
            self.user(m.group(1))
            self.host(m.group(2))
        for rx in (_NCCL_HOST, _FQDN):
            for m in rx.finditer(text):
                self.host(m.group(1))
        for m in _HOST_KV.finditer(text):
            self.host(m.group(2))
        for m in _URL_HOST.finditer(text):
            self.host(m.group(3))
        for m in _USER_KV.finditer(text):
            self.user(m.group(2))

    def text(self, text: str) -> str:
        if not text:
            return text
        out = _IPV4.sub(lambda m: self.ip(m.group(0)), text)
        out = _HOME.sub(lambda m: f"/home/{self.user(m.group(2))}", out)
        out = _USER_AT.sub(lambda m: f"{self.user(m.group(1))}@{self.host(m.group(2))}", out)
        out = _USER_KV.sub(lambda m: f"{m.group(1)}{self.user(m.group(2))}", out)
        out = _NCCL_HOST.sub(lambda m: f"{self.host(m.group(1))}:{m.group(2)}:{m.group(3)} [", out)
        out = _HOST_KV.sub(lambda m: f"{m.group(1)}{self.host(m.group(2))}", out)
        out = _URL_HOST.sub(lambda m: m.group(1) + self._url_user(m.group(2)) + self.host(m.group(3)), out)
        out = _FQDN.sub(lambda m: self.host(m.group(1)), out)
        out = _ABS_PATH.sub(self._path, out)
        # names learned anywhere in the report, where they appear bare (host names only when
        # they look like one: a digit, a dash or a dot; never a common word)
        for kind in ("host", "user"):
            names = sorted((n for n in self.maps[kind] if len(n) >= 3 and n.lower() not in _COMMON
                            and (kind == "user" or re.search(r"[\d.-]", n))), key=len, reverse=True)
            if names:
                rx = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])", re.IGNORECASE if kind == "host" else 0)
                table, fold = self.maps[kind], kind == "host"

                def bare(m: re.Match[str], table: dict[str, str] = table, fold: bool = fold) -> str:
                    return table.get(m.group(1).lower() if fold else m.group(1), m.group(1))

                out = rx.sub(bare, out)
        return out


# ---------------------------------------------------------------------- walking a report
def _walk(obj: Any, fn: Callable[[str, bool], str], logish: bool = False) -> Any:
    if isinstance(obj, str):
        return fn(obj, logish)
    if isinstance(obj, dict):
        return {k: _walk(v, fn, logish or k in BUNDLE_KEYS) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_walk(v, fn, logish) for v in obj]
    return obj


def redact(obj: Any, bundle: bool = False) -> Any:
    """A copy of ``obj`` (a report, an incident, any JSON-like value) safe to share.

    Secrets are replaced in every string. With ``bundle``, hosts, users, IPs and
    absolute paths in log-derived strings are replaced by consistent placeholders.
    """
    if not bundle:
        return _walk(obj, lambda s, _: redact_text(s))
    anon = Anonymizer()

    def learn(s: str, logish: bool) -> str:
        if logish:
            anon.learn(redact_text(s))
        return s

    _walk(obj, learn)  # first every name, so placeholders hold across the whole report
    return _walk(obj, lambda s, logish: anon.text(redact_text(s)) if logish else redact_text(s))
