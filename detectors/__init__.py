"""Everything that knows about training failures, and nothing that does I/O.

Data path inside this package: ``prefixes`` (strip launcher/logger prefixes, find the
rank) → ``parsers`` (lines → typed events) → ``detect`` (per-rank state → findings) →
``correlate`` (job-wide findings → incidents) → ``diagnosis`` (catalog text for a
report). Every stage is pure and deterministic: the same bytes give the same verdict,
offline (``rankwatch diagnose``) and live (``rankwatch run``).
"""
