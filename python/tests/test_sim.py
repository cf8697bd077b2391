"""The simulator's bindings: models, geometry, counters, the time model,
power cuts, faults, direct access and image files."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys

import pytest

import cairn
from conftest import make_sim


def test_models_and_info():
    names = cairn.Sim.models()
    assert names == ["nor-m25p16", "nor-w25q128", "nand-dhara", "nand-jffs2", "sd-tf"]
    info = cairn.Sim.model_info("nand-dhara")
    g = info.geometry
    assert (g.page_size, g.spare_size, g.pages_per_block, g.block_count) == (2048, 32, 64, 1024)
    assert g.medium == cairn.Medium.NAND and g.max_partial_programs == 1
    assert g.total_bytes == 128 << 20
    assert info.cost.read_setup_ns == 950_000 and info.ftl is None
    sd = cairn.Sim.model_info("sd-tf")
    assert sd.ftl == cairn.Ftl(au_bytes=4 << 20, flash_page_bytes=16 << 10, open_aus=4)
    with pytest.raises(cairn.SimError):
        cairn.Sim.model_info("no-such")


def test_new_options_and_errors():
    with cairn.Sim("nor-w25q128", block_count=256, blocks_per_lblock=4, seed=3) as sim:
        g = sim.geometry
        assert (g.block_count, g.blocks_per_lblock, g.block_size) == (256, 4, 4096)
        assert sim.dev.geo.block_count == 256
        assert "nor-w25q128" in repr(sim)
    assert sim.closed
    with pytest.raises(ValueError):
        sim.counters()
    with pytest.raises(cairn.SimError, match="csim_new"):
        cairn.Sim("no-such-model")
    with pytest.raises(cairn.SimError):
        cairn.Sim("nor-w25q128", block_count=100, blocks_per_lblock=3)
    with pytest.raises(ValueError):
        cairn.Sim("nor-m25p16").cut_at(0, tear="sideways")


def test_custom_geometry_checked():
    with pytest.raises(cairn.SimError):
        cairn.Sim.custom(cairn.Geometry(page_size=0, pages_per_block=1, block_count=1))
    with cairn.Sim.custom({"page_size": 256, "pages_per_block": 16, "block_count": 32,
                           "medium": cairn.Medium.NOR},
                          cairn.Cost(erase_ns=1000)) as sim:
        assert sim.geometry.page_count == 512
        assert sim.dev_erase(0) == cairn.DevResult.OK
        assert sim.counters().time_ns == 1000


def test_counters_and_time_model():
    # The worked example of docs/DESIGN.md: a whole-page read on nand-dhara.
    with cairn.Sim("nand-dhara", block_count=16) as sim:
        assert sim.counters() == cairn.Counters()
        rc, data = sim.dev_read(0, 0, 2048)
        assert rc == cairn.DevResult.OK and data == b"\xff" * 2048
        c = sim.counters()
        assert (c.read_calls, c.read_bytes, c.time_ns) == (1, 2048, 1_025_851)
        assert sim.time_ns == 1_025_851
        before = sim.counters()
        assert sim.dev_prog(0, 0, b"\x00" * 2048) == cairn.DevResult.OK
        d = sim.counters() - before
        assert (d.prog_calls, d.prog_bytes, d.prog_pages, d.mutating_ops) == (1, 2048, 1, 1)
        cost = cairn.Sim.model_info("nand-dhara").cost
        rate = 2048 * 10**9 // cost.prog_bytes_per_s if cost.prog_bytes_per_s else 0
        assert d.time_ns == cost.prog_setup_ns + rate + cost.prog_page_ns
        assert cost.prog_page_ns == 2_075_000
        assert sim.dev_erase(0) == cairn.DevResult.OK
        assert sim.erase_count(0) == 1 and sim.erase_counts()[:2] == [1, 0]
        assert (sim.counters() - before).as_dict()["erases"] == 1
        sim.reset_counters()
        c = sim.counters()
        assert c.read_calls == 0 and c.time_ns == 0 and c.mutating_ops == 2
        assert (c + c).mutating_ops == 4


def test_rule_violation_counted():
    with cairn.Sim("nor-m25p16") as sim:
        assert sim.dev_prog(0, 0, b"\x0f") == cairn.DevResult.OK
        assert sim.dev_prog(0, 0, b"\xf0") == cairn.DevResult.RULE  # 0 -> 1 on NOR
        assert sim.counters().violations == 1
        assert sim.last_violation != ""
        assert sim.peek(0)[:1] == b"\x0f"


def test_power_cut_and_power_on():
    with cairn.Sim("nor-m25p16") as sim:
        sim.dev_prog(0, 0, b"\x00" * 16)
        assert sim.counters().mutating_ops == 1
        sim.cut_after(1, tear="none")  # the op after the next one
        assert sim.dev_prog(1, 0, b"\x00" * 16) == cairn.DevResult.OK
        assert sim.powered
        assert sim.dev_prog(2, 0, b"\x00" * 16) == cairn.DevResult.IO
        assert not sim.powered
        assert sim.dev_read(0, 0, 4)[0] == cairn.DevResult.IO
        sim.power_on()
        assert sim.powered and sim.counters().mutating_ops == 0
        assert sim.peek(2) == b"\xff" * 256  # tear "none": nothing happened
        sim.cut_at(0, cairn.Tear.PREFIX)
        sim.cut_cancel()
        assert sim.dev_erase(0) == cairn.DevResult.OK and sim.powered


def test_faults():
    with cairn.Sim("nand-dhara", block_count=16, seed=5) as sim:
        sim.set_factory_bad(3)
        assert sim.is_bad(3) and not sim.is_bad(4)
        assert sim.dev_erase(3) == cairn.DevResult.ERASE_FAIL
        assert sim.mark_bad(4) == cairn.DevResult.OK and sim.is_bad(4)
        sim.fail_op(sim.counters().mutating_ops)
        assert sim.dev_erase(5) == cairn.DevResult.ERASE_FAIL
        sim.wear_out_after(6, 1)
        assert sim.dev_erase(6) == cairn.DevResult.OK
        assert sim.dev_erase(6) == cairn.DevResult.ERASE_FAIL
        sim.wear_out_now(7)
        assert sim.dev_erase(7) == cairn.DevResult.ERASE_FAIL
        sim.set_bitflips(corrected_ppm=0, uncorrectable_ppm=1_000_000)
        rc, _ = sim.dev_read(0, 0, 2048)
        assert rc == cairn.DevResult.UNCORRECTABLE
        assert sim.counters().uncorrectable == 1
        sim.set_bitflips(1_000_000, 0)
        assert sim.dev_read(0, 0, 16)[0] == cairn.DevResult.CORRECTED
        assert sim.counters().corrected == 1


def test_peek_poke_spare():
    with cairn.Sim("nand-jffs2", block_count=8) as sim:
        data, spare = sim.peek(5, spare=True)
        assert data == b"\xff" * 2048 and spare == b"\xff" * 32
        sim.poke(5, bytes(range(256)) * 8, spare=b"\x01" * 32)
        assert sim.peek(5, spare=True) == (bytes(range(256)) * 8, b"\x01" * 32)
        assert sim.dev_read_spare(5, 4) == (cairn.DevResult.OK, b"\x01" * 4)
        assert sim.counters().spare_reads == 1
        with pytest.raises(ValueError):
            sim.poke(0, b"short")
        with pytest.raises(cairn.SimError):
            sim.peek(8 * 64)


def test_peek_poke_block():
    with cairn.Sim("nand-jffs2", block_count=8) as sim:
        g = sim.geometry
        assert sim.peek_block(2, spare=True) == (b"\xff" * g.block_size,
                                                 b"\xff" * (64 * 32))
        data = bytes(range(256)) * (g.block_size // 256)
        spare = bytes(range(64)) * 32
        sim.poke_block(2, data, spare)
        assert sim.peek(2 * 64 + 1, spare=True) == (data[2048:4096], spare[32:64])
        assert sim.peek_block(2) == data
        assert sim.counters().read_calls == 0
        with pytest.raises(ValueError):
            sim.poke_block(0, b"short")
        with pytest.raises(ValueError):
            sim.poke_block(0, data, b"short")
        with pytest.raises(cairn.SimError):
            sim.peek_block(8)


def test_image_round_trip(tmp_path):
    path = tmp_path / "dev.img"
    with cairn.Sim("nor-w25q128", block_count=128, blocks_per_lblock=4, image=path) as sim:
        cairn.format(sim)
        with cairn.mount(sim) as fs:
            fs.write_file("/keep", b"persistent" * 100)
        erases = sim.erase_count(5)
    assert path.stat().st_size > 0
    with cairn.Sim.open(path) as sim2:
        assert sim2.geometry.block_count == 128 and sim2.erase_count(5) == erases
        with cairn.mount(sim2) as fs:
            assert fs.read_file("/keep") == b"persistent" * 100
        sim2.save()
    with pytest.raises(cairn.SimError):
        cairn.Sim.open(tmp_path / "missing.img")
    with pytest.raises(cairn.SimError):
        cairn.Sim.open(path, model="nand-dhara")


def test_dataclasses_are_plain():
    c = cairn.Counters(read_calls=1)
    assert dataclasses.asdict(c)["read_calls"] == 1
    assert pickle.loads(pickle.dumps(c)) == c


@pytest.mark.parametrize("medium", ["nor", "nand", "block"])
def test_fixture_volumes(medium):
    with make_sim(medium) as sim:
        g = sim.geometry
        assert g.medium == {"nor": 1, "nand": 2, "block": 3}[medium]
        cairn.format(sim)
        assert sim.counters().erases > 0


def test_interpreter_exit_with_live_mount(tmp_path):
    # Objects still alive at exit: the simulator is freed by its finalizer,
    # the mount abandoned first, so no close() reaches freed memory.
    script = tmp_path / "exit.py"
    script.write_text(
        "import cairn\n"
        "sim = cairn.Sim('nor-w25q128', block_count=128, blocks_per_lblock=4, "
        f"image={str(tmp_path / 'x.img')!r})\n"
        "cairn.format(sim)\n"
        "fs = cairn.mount(sim)\n"
        "f = fs.open('/open-at-exit', 'w')\n"
        "f.write(b'x' * 1000)\n"
        "d = fs.opendir('/')\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(
        cairn.__file__)), env.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "x.img").stat().st_size > 0  # saved by the finalizer
