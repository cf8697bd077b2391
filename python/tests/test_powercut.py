"""Power cuts through the bindings: what was synced survives, the volume
mounts clean and stays writable (cairn's invariants 1 and 2, in small)."""

from __future__ import annotations

import pytest

import cairn
from conftest import make_sim, pattern

RECORDS = [pattern(40 + 13 * i, 100 + i) for i in range(8)]
STABLE = pattern(3000, 7)


def _prepare(medium: str, seed: int, **cfg):
    sim = make_sim(medium, seed=seed)
    cairn.format(sim)
    fs = cairn.mount(sim, **cfg)
    fs.write_file("/stable", STABLE)
    fs.mkdir("/dir")
    fs.write_file("/dir/old", b"old")
    fs.sync()
    return sim, fs


def _scenario(fs, progress: dict) -> None:
    """Synced appends to /log interleaved with namespace changes; progress
    records what completed."""
    with fs.open("/log", "a") as log:
        for i, rec in enumerate(RECORDS):
            log.write(rec)
            log.sync()
            progress["synced"] = i + 1
            if i == 2:
                fs.rename("/dir/old", "/dir/new")
                fs.sync()
                progress["renamed"] = True
            if i == 5:
                fs.write_file("/big", pattern(5000, 8))
                progress["big"] = True


def _ops_of_scenario(medium: str, **cfg) -> int:
    sim, fs = _prepare(medium, 1, **cfg)
    start = sim.counters().mutating_ops
    _scenario(fs, {})
    n = sim.counters().mutating_ops - start
    fs.unmount()
    sim.close()
    return n


@pytest.mark.parametrize("commit_pages", [0, 1], ids=["commit-default", "commit-1"])
@pytest.mark.parametrize("tear", ["prefix", "random"])
def test_cut_at_every_op_keeps_synced_data(medium, tear, commit_pages):
    n = _ops_of_scenario(medium, commit_pages=commit_pages)
    assert n > 8
    cuts = range(n) if n <= 60 else sorted({round(k * (n - 1) / 59) for k in range(60)})
    for i in cuts:
        sim, fs = _prepare(medium, seed=1000 + i, commit_pages=commit_pages)
        sim.cut_at(sim.counters().mutating_ops + i, tear)
        progress = {"synced": 0, "renamed": False, "big": False}
        with pytest.raises(cairn.DeviceError) as ei:
            _scenario(fs, progress)
        assert ei.value.code == cairn.Err.IO and not sim.powered
        label = f"{medium} {tear} cut at op {i}/{n}: {progress}"

        sim.power_on()
        fs.abandon()
        fs.mount()
        assert fs.check().ok, label
        assert fs.read_file("/stable") == STABLE, label
        log = fs.read_file("/log") if fs.exists("/log") else b""
        whole = b"".join(RECORDS)
        synced = b"".join(RECORDS[:progress["synced"]])
        assert log.startswith(synced) and whole.startswith(log), label
        names = fs.listdir("/dir")
        assert names == (["new"] if progress["renamed"] else names) and len(names) == 1, label
        assert fs.read_file("/dir/" + names[0]) == b"old", label
        if progress["big"]:
            assert fs.read_file("/big") == pattern(5000, 8), label
        # The recovered volume takes writes that survive a remount.
        fs.write_file("/after", b"after the cut")
        fs.remount()
        assert fs.read_file("/after") == b"after the cut", label
        assert fs.check().ok, label
        fs.unmount()
        assert sim.counters().violations == 0, sim.last_violation
        sim.close()


def test_with_block_abandons_after_cut(medium):
    sim, fs = _prepare(medium, seed=3)
    fs.unmount()
    with pytest.raises(cairn.DeviceError):
        with cairn.mount(sim) as fs:
            f = fs.open("/x", "w")
            sim.cut_after(0)
            f.write(pattern(3 * sim.geometry.page_size, 1))
            f.sync()
    assert not fs.mounted and f.closed  # unmount failed too: abandoned
    sim.power_on()
    with cairn.mount(sim) as fs:
        assert fs.read_file("/stable") == STABLE
        assert fs.check().ok
    sim.close()


def test_cut_during_mount_recovery():
    # A cut while a mount recovers from an earlier cut: the next mount
    # still recovers.
    sim, fs = _prepare("nand", seed=4)
    sim.cut_after(3)
    with pytest.raises(cairn.DeviceError):
        _scenario(fs, {"synced": 0})
    fs.abandon()
    sim.power_on()
    sim.cut_after(0, "random")
    with pytest.raises(cairn.Error):
        fs.mount()
    assert not fs.mounted
    sim.power_on()
    fs.mount()
    assert fs.read_file("/stable") == STABLE and fs.check().ok
    fs.unmount()
    sim.close()
