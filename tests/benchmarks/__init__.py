"""Benchmarks of the statistics package (not installed): ``python -m tests.benchmarks.<name>`` from the
repository root, or ``make bench``. Figures and commands: docs/benchmarks.md."""
