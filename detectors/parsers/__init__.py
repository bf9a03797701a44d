"""Log-format parsers: one module per kind of line (metrics, launchers, exceptions, context, perf)."""
