"""Benchmark scenarios of cairn (see /work/shared/BENCH-SCENARIOS.md).

Each module defines ID, TITLE and run() -> dict (see common.result) and runs
alone: ``python -m bench.scenarios.fib`` or ``python bench/scenarios/fib.py``.
"""
