"""Shared fixtures: small simulated volumes of the three media, as the C tests
use them (tests/core/tsupport.h), and the Hypothesis profiles.

Hypothesis profiles (HYPOTHESIS_PROFILE selects one):
  ci   (default) derandomized: the same examples on every run, no database
  dev  random examples, failures saved under python/.hypothesis/
"""

from __future__ import annotations

import os
import pathlib
import random

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

import cairn

# Hypothesis keeps its files in python/.hypothesis (gitignored), not in the
# directory pytest was started from.
HYPOTHESIS_HOME = pathlib.Path(__file__).resolve().parent.parent / ".hypothesis"
set_hypothesis_home_dir(str(HYPOTHESIS_HOME))

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    deadline=None,
    database=DirectoryBasedExampleDatabase(str(HYPOTHESIS_HOME / "examples")),
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

MEDIA = ("nor", "nand", "block")


def make_sim(medium: str, seed: int = 1) -> cairn.Sim:
    """NOR: nor-w25q128, 128 blocks of 4 KiB, 4 per logical block (512 KiB).
    NAND: nand-dhara, 64 blocks of 128 KiB, one per logical block (8 MiB).
    BLOCK: SD-like custom device, 512 B sectors, 64 per block, 64 blocks,
    32 KiB allocation units (2 MiB), sd-tf's cost table."""
    if medium == "nor":
        return cairn.Sim("nor-w25q128", block_count=128, blocks_per_lblock=4, seed=seed)
    if medium == "nand":
        return cairn.Sim("nand-dhara", block_count=64, blocks_per_lblock=1, seed=seed)
    if medium == "block":
        geo = cairn.Geometry(page_size=512, spare_size=0, pages_per_block=64, block_count=64,
                             medium=cairn.Medium.BLOCK, write_unit=4096, blocks_per_lblock=1)
        cost = cairn.Sim.model_info("sd-tf").cost
        ftl = cairn.Ftl(au_bytes=32768, flash_page_bytes=4096, open_aus=4)
        return cairn.Sim.custom(geo, cost, ftl, seed=seed)
    raise ValueError(medium)


def pattern(n: int, seed: int) -> bytes:
    """n deterministic bytes that differ with seed and position."""
    return random.Random(seed).randbytes(n)


@pytest.fixture(params=MEDIA)
def medium(request) -> str:
    return request.param


@pytest.fixture
def sim(medium):
    with make_sim(medium) as s:
        yield s
        assert s.counters().violations == 0, s.last_violation


@pytest.fixture
def fs(sim):
    cairn.format(sim)
    with cairn.mount(sim) as f:
        yield f
