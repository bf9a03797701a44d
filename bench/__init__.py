"""Benchmarks of rankwatch side by side with the reference tools (mtail, grep).

Run ``python -m bench --help`` from the repository root; see bench/README.md.
"""
