"""Jinja2 environments for the kit's templates, and the YAML writer of every rule file.

YAML templates use ``[[ … ]]`` and ``[% … %]`` so Prometheus' own ``{{ … }}`` passes
through untouched; Markdown templates use Jinja's usual delimiters. A YAML template's
output is parsed, validated by the caller, then written by :func:`dump_yaml` (one style
for every file, block scalars for multi-line strings).
"""

from __future__ import annotations

import json
from typing import Any

import jinja2
import yaml

__all__ = ["dump_yaml", "go_label", "go_literal", "markdown", "yaml_template"]


def go_literal(text: str) -> str:
    """Catalog prose inside a Prometheus annotation: a literal ``{{`` must not start an action."""
    return " ".join(text.split()).replace("{{", '{{ "{{" }}')


def go_label(name: str, default: str | None = None) -> str:
    """``{{ $labels.name }}``, or ``{{ or $labels.name "default" }}``."""
    if default is None:
        return f"{{{{ $labels.{name} }}}}"
    return f"{{{{ or $labels.{name} {json.dumps(default)} }}}}"


def _env(block: tuple[str, str] = ("{%", "%}"), variable: tuple[str, str] = ("{{", "}}"),
         comment: tuple[str, str] = ("{#", "#}")) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("monitor.kit", "templates"),
        block_start_string=block[0], block_end_string=block[1],
        variable_start_string=variable[0], variable_end_string=variable[1],
        comment_start_string=comment[0], comment_end_string=comment[1],
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        autoescape=False,  # YAML and Markdown, not HTML
    )
    env.filters["go"] = go_literal
    env.filters["format_code"] = lambda v: f"`{v}`"
    env.filters["json"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.globals["label"] = go_label
    return env


_YAML = _env(("[%", "%]"), ("[[", "]]"), ("[#", "#]"))
_MD = _env()


def yaml_template(name: str, **context: Any) -> Any:
    """Render a YAML template and parse it."""
    return yaml.safe_load(_YAML.get_template(name).render(**context))


def markdown(name: str, **context: Any) -> str:
    return _MD.get_template(name).render(**context)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(d: yaml.SafeDumper, s: str) -> yaml.Node:
    return d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None)


_Dumper.add_representer(str, _str)


def dump_yaml(header: str, obj: Any) -> str:
    body = yaml.dump(obj, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120, default_flow_style=False)
    return "".join(f"# {line}\n".replace("# \n", "#\n") for line in header.splitlines()) + body
