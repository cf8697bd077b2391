"""The flash simulator (sim/csim.h): device models, counters, time model,
power cuts, bad blocks, bit flips, images."""

from __future__ import annotations

import dataclasses
import enum
import os
import weakref
from dataclasses import dataclass

from ._errors import SimError
from ._ffi import ffi, lib


class Medium(enum.IntEnum):
    """enum cairn_medium."""

    NOR = lib.CAIRN_MEDIUM_NOR
    NAND = lib.CAIRN_MEDIUM_NAND
    BLOCK = lib.CAIRN_MEDIUM_BLOCK


class DevResult(enum.IntEnum):
    """enum cairn_dev_result: what a device callback returns."""

    OK = lib.CAIRN_DEV_OK
    CORRECTED = lib.CAIRN_DEV_CORRECTED
    UNCORRECTABLE = lib.CAIRN_DEV_UNCORRECTABLE
    PROG_FAIL = lib.CAIRN_DEV_PROG_FAIL
    ERASE_FAIL = lib.CAIRN_DEV_ERASE_FAIL
    IO = lib.CAIRN_DEV_IO
    RULE = lib.CAIRN_DEV_RULE


class Tear(enum.IntEnum):
    """enum csim_tear: how the operation a power cut falls on is torn."""

    PREFIX = lib.CSIM_TEAR_PREFIX
    RANDOM = lib.CSIM_TEAR_RANDOM
    NONE = lib.CSIM_TEAR_NONE
    EMPTY = lib.CSIM_TEAR_EMPTY


def _tear(t) -> int:
    if isinstance(t, str):
        try:
            return int(Tear[t.upper()])
        except KeyError:
            raise ValueError(f"tear must be 'prefix', 'random' or 'none', not {t!r}") from None
    return int(Tear(t))


def _from_struct(cls, cdata):
    return cls(**{f.name: getattr(cdata, f.name) for f in dataclasses.fields(cls)})


def _to_struct(ctype: str, obj):
    """A new cdata struct from a dataclass, a dict or None (all zero)."""
    s = ffi.new(ctype + " *")
    if obj is None:
        return s
    items = obj.items() if isinstance(obj, dict) else dataclasses.asdict(obj).items()
    for k, v in items:
        setattr(s, k, int(v))
    return s


@dataclass(frozen=True)
class Geometry:
    """struct cairn_geometry (see include/cairn_device.h)."""

    page_size: int
    spare_size: int = 0
    pages_per_block: int = 1
    block_count: int = 1
    medium: int = Medium.NOR
    max_partial_programs: int = 0
    write_unit: int = 0
    blocks_per_lblock: int = 0

    @property
    def block_size(self) -> int:
        """Bytes in one erase block."""
        return self.page_size * self.pages_per_block

    @property
    def page_count(self) -> int:
        return self.pages_per_block * self.block_count

    @property
    def total_bytes(self) -> int:
        """Data bytes of the whole device (spare areas not counted)."""
        return self.page_size * self.page_count


@dataclass(frozen=True)
class Cost:
    """struct csim_cost: modelled cost of operations (ns, bytes per second)."""

    read_setup_ns: int = 0
    read_bytes_per_s: int = 0
    prog_setup_ns: int = 0
    prog_bytes_per_s: int = 0
    prog_page_ns: int = 0
    erase_ns: int = 0
    ftl_prog_ns: int = 0
    ftl_erase_ns: int = 0


@dataclass(frozen=True)
class Ftl:
    """struct csim_ftl: the card model of BLOCK media."""

    au_bytes: int = 0
    flash_page_bytes: int = 0
    open_aus: int = 0


@dataclass(frozen=True)
class ModelInfo:
    """A named model's geometry, cost table and card model (None unless BLOCK)."""

    name: str
    geometry: Geometry
    cost: Cost
    ftl: Ftl | None


@dataclass(frozen=True)
class Counters:
    """struct csim_counters: operation counters and modelled time (time_ns).

    Subtracting two snapshots gives the counts between them:
    ``d = sim.counters() - before``.
    """

    read_calls: int = 0
    read_bytes: int = 0
    prog_calls: int = 0
    prog_bytes: int = 0
    prog_pages: int = 0
    erases: int = 0
    spare_reads: int = 0
    mutating_ops: int = 0
    time_ns: int = 0
    ftl_prog_pages: int = 0
    ftl_copy_pages: int = 0
    ftl_erases: int = 0
    ftl_merges: int = 0
    corrected: int = 0
    uncorrectable: int = 0
    violations: int = 0

    def __sub__(self, other: "Counters") -> "Counters":
        if not isinstance(other, Counters):
            return NotImplemented
        return Counters(**{f.name: getattr(self, f.name) - getattr(other, f.name)
                           for f in dataclasses.fields(self)})

    def __add__(self, other: "Counters") -> "Counters":
        if not isinstance(other, Counters):
            return NotImplemented
        return Counters(**{f.name: getattr(self, f.name) + getattr(other, f.name)
                           for f in dataclasses.fields(self)})

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class _Owned:
    """The csim pointer, None once freed."""

    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


def _free(owned: _Owned, users) -> None:
    for fs in list(users):
        fs._forget()
    ptr, owned.ptr = owned.ptr, None
    if ptr is not None:
        lib.csim_free(ptr)


def _new_error(what: str) -> SimError:
    return SimError(f"{what}: {ffi.string(lib.csim_error()).decode()}")


class Sim:
    """A simulated flash device (one csim).

    ``Sim(model, block_count=0, blocks_per_lblock=0, seed=0, image=None,
    create=True)`` makes a device of a named model (``Sim.models()``), in RAM,
    or backed by a new image file when ``image`` is a path. Zero options take
    the model's values. ``Sim.open(image)`` opens an existing image (geometry
    from the file); ``Sim.custom(geometry, cost, ftl)`` takes any geometry.

    The device is freed by ``close()`` (an image file is saved first), by
    the end of a ``with`` block, or when the object is collected. Closing
    abandons any file system still mounted on it (see FS.abandon).

    Not thread-safe: use one Sim (and its file systems) from one thread.
    """

    def __init__(self, model: str | None = "nor-w25q128", *, block_count: int = 0,
                 blocks_per_lblock: int = 0, seed: int = 0, image=None, create: bool = True):
        opt, keep = self._options(seed, block_count, blocks_per_lblock, image, create)
        m = ffi.NULL if model is None else model.encode()
        ptr = lib.csim_new(m, opt)
        del keep
        if ptr == ffi.NULL:
            raise _new_error(f"csim_new({model!r})")
        self._init(ptr, model, image)

    @staticmethod
    def _options(seed, block_count, blocks_per_lblock, image, create):
        opt = ffi.new("struct csim_options *")
        opt.seed = int(seed)
        opt.block_count = int(block_count)
        opt.blocks_per_lblock = int(blocks_per_lblock)
        keep = None
        if image is not None:
            keep = ffi.new("char[]", os.fsencode(image))
            opt.image_path = keep
            opt.create = 1 if create else 0
        return opt, keep

    def _init(self, ptr, model, image) -> None:
        self._own = _Owned(ptr)
        self.model = model
        self.image = os.fspath(image) if image is not None else None
        self._dev = lib.csim_dev(ptr)
        self._users: weakref.WeakSet = weakref.WeakSet()
        g = lib.csim_geometry(ptr)
        self.geometry = _from_struct(Geometry, g)
        # Also runs at interpreter exit (before objects are torn down): file
        # systems on the device are abandoned first, so no later close() or
        # unmount() reaches freed memory.
        self._finalizer = weakref.finalize(self, _free, self._own, self._users)

    @property
    def _ptr(self):
        return self._own.ptr

    @classmethod
    def open(cls, image, *, model: str | None = None, seed: int = 0, block_count: int = 0,
             blocks_per_lblock: int = 0) -> "Sim":
        """Open an existing image file; geometry, cost and block state come from
        it (``model`` and non-zero block counts, if given, must match)."""
        self = cls.__new__(cls)
        opt, keep = cls._options(seed, block_count, blocks_per_lblock, image, False)
        ptr = lib.csim_new(ffi.NULL if model is None else model.encode(), opt)
        del keep
        if ptr == ffi.NULL:
            raise _new_error(f"csim_new(image={os.fspath(image)!r})")
        self._init(ptr, model, image)
        return self

    @classmethod
    def custom(cls, geometry: Geometry | dict, cost: Cost | dict | None = None,
               ftl: Ftl | dict | None = None, *, seed: int = 0, image=None) -> "Sim":
        """Any geometry and cost table (csim_new_custom); ``ftl`` is required
        for BLOCK media. Unset cost fields cost nothing."""
        self = cls.__new__(cls)
        geo = _to_struct("struct cairn_geometry", geometry)
        c = _to_struct("struct csim_cost", cost)
        f = ffi.NULL if ftl is None else _to_struct("struct csim_ftl", ftl)
        opt, keep = cls._options(seed, 0, 0, image, True)
        ptr = lib.csim_new_custom(geo, c, f, opt)
        del keep
        if ptr == ffi.NULL:
            raise _new_error("csim_new_custom")
        self._init(ptr, None, image)
        return self

    # ---- models ----
    @staticmethod
    def models() -> list[str]:
        """Names of the built-in device models."""
        names = lib.csim_model_names()
        out = []
        i = 0
        while names[i] != ffi.NULL:
            out.append(ffi.string(names[i]).decode())
            i += 1
        return out

    @staticmethod
    def model_info(name: str) -> ModelInfo:
        """Geometry, cost table and card model of a named model."""
        geo = ffi.new("struct cairn_geometry *")
        cost = ffi.new("struct csim_cost *")
        ftl = ffi.new("struct csim_ftl *")
        if lib.csim_model_info(name.encode(), geo, cost, ftl) != 0:
            raise SimError(f"unknown model {name!r}")
        g = _from_struct(Geometry, geo)
        return ModelInfo(name, g, _from_struct(Cost, cost),
                         _from_struct(Ftl, ftl) if g.medium == Medium.BLOCK else None)

    # ---- life ----
    @property
    def closed(self) -> bool:
        return self._ptr is None

    def _p(self):
        if self._ptr is None:
            raise ValueError("the simulator is closed")
        return self._ptr

    @property
    def dev(self):
        """The device (cdata ``struct cairn_dev *``), owned by this Sim."""
        self._p()
        return self._dev

    def save(self) -> None:
        """Write the image file now (no-op for RAM storage)."""
        if lib.csim_save(self._p()) != 0:
            raise _new_error("csim_save")

    def close(self) -> None:
        """Free the device (saving its image file, if any). File systems still
        mounted on it are abandoned, not unmounted. Idempotent."""
        if self._ptr is None:
            return
        self._dev = None
        self._finalizer()

    def __enter__(self) -> "Sim":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        what = self.model or "custom"
        state = "closed" if self._ptr is None else f"{self.geometry.total_bytes} bytes"
        return f"<cairn.Sim {what} {state}>"

    # ---- counters and time ----
    def counters(self) -> Counters:
        """A snapshot of every counter (csim_counters)."""
        c = ffi.new("struct csim_counters *")
        lib.csim_counters(self._p(), c)
        return _from_struct(Counters, c)

    def reset_counters(self) -> None:
        """Zero every counter except mutating_ops."""
        lib.csim_reset_counters(self._p())

    @property
    def time_ns(self) -> int:
        """Modelled device time so far, in nanoseconds."""
        return self.counters().time_ns

    def erase_count(self, block: int) -> int:
        """Erases of one erase block over the device's life."""
        return int(lib.csim_erase_count(self._p(), block))

    def erase_counts(self) -> list[int]:
        """Erase count of every erase block."""
        p = self._p()
        return [int(lib.csim_erase_count(p, b)) for b in range(self.geometry.block_count)]

    @property
    def last_violation(self) -> str:
        """Text of the last rule violation ("" if none)."""
        return ffi.string(lib.csim_last_violation(self._p())).decode()

    # ---- power ----
    def cut_at(self, op_index: int, tear="prefix") -> None:
        """Cut power at the mutating operation with index op_index (as counted
        in counters().mutating_ops: the next one has index mutating_ops). It is
        torn as ``tear`` says ("prefix", "random", "none" or a Tear); it and
        every later call fail until power_on()."""
        lib.csim_cut_at(self._p(), int(op_index), _tear(tear))

    def cut_after(self, ops: int, tear="prefix") -> None:
        """Cut power at the ops-th mutating operation from now (0 = the next)."""
        self.cut_at(self.counters().mutating_ops + int(ops), tear)

    def cut_cancel(self) -> None:
        lib.csim_cut_cancel(self._p())

    @property
    def powered(self) -> bool:
        """False after a power cut, until power_on()."""
        return bool(lib.csim_powered(self._p()))

    def power_on(self) -> None:
        """Restore power (data as the cut left it); mutating_ops restarts at 0."""
        lib.csim_power_on(self._p())

    # ---- bad blocks, failures, bit flips ----
    def set_factory_bad(self, block: int) -> None:
        lib.csim_set_factory_bad(self._p(), block)

    def wear_out_after(self, block: int, erases: int) -> None:
        """Erases of block fail after ``erases`` more successful ones."""
        lib.csim_wear_out_after(self._p(), block, erases)

    def wear_out_now(self, block: int) -> None:
        """Every later program or erase of block fails (its data stays readable)."""
        lib.csim_wear_out_now(self._p(), block)

    def fail_op(self, op_index: int) -> None:
        """The mutating op with this index fails and its block goes bad."""
        lib.csim_fail_op(self._p(), op_index)

    def fail_cancel(self) -> None:
        """Forget pending fail_op failures (power_on forgets them too)."""
        lib.csim_fail_cancel(self._p())

    def set_bitflips(self, corrected_ppm: int = 0, uncorrectable_ppm: int = 0) -> None:
        """Per page read (NAND only): probabilities in parts per million."""
        lib.csim_set_bitflips(self._p(), corrected_ppm, uncorrectable_ppm)

    # ---- direct access (no counters, no rules) ----
    def peek(self, page: int, spare: bool = False):
        """A page's data (bytes), or (data, spare) when spare is true."""
        g = self.geometry
        data = ffi.new("uint8_t[]", g.page_size)
        sp = ffi.new("uint8_t[]", max(g.spare_size, 1)) if spare else ffi.NULL
        if lib.csim_peek(self._p(), page, data, sp) != 0:
            raise SimError(f"csim_peek: bad page {page}")
        d = bytes(ffi.buffer(data))
        return (d, bytes(ffi.buffer(sp, g.spare_size))) if spare else d

    def poke(self, page: int, data, spare=None) -> None:
        """Overwrite a page's data (page_size bytes) and optionally its spare."""
        g = self.geometry
        if len(data) != g.page_size:
            raise ValueError(f"poke needs {g.page_size} bytes of data, got {len(data)}")
        if spare is not None and len(spare) != g.spare_size:
            raise ValueError(f"poke needs {g.spare_size} bytes of spare, got {len(spare)}")
        d = ffi.from_buffer(data)
        s = ffi.NULL if spare is None else ffi.from_buffer(spare)
        if lib.csim_poke(self._p(), page, d, s) != 0:
            raise SimError(f"csim_poke: bad page {page}")

    def peek_block(self, block: int, spare: bool = False):
        """A whole erase block at once (csim_peek_block): its data
        (block_size bytes), or (data, spare) with the spare areas of its
        pages one after the other when spare is true."""
        g = self.geometry
        data = ffi.new("uint8_t[]", g.block_size)
        sp_len = g.pages_per_block * g.spare_size
        sp = ffi.new("uint8_t[]", max(sp_len, 1)) if spare else ffi.NULL
        if lib.csim_peek_block(self._p(), block, data, sp) != 0:
            raise SimError(f"csim_peek_block: bad block {block}")
        d = bytes(ffi.buffer(data))
        return (d, bytes(ffi.buffer(sp, sp_len))) if spare else d

    def poke_block(self, block: int, data, spare=None) -> None:
        """Overwrite a whole erase block's data (block_size bytes) and
        optionally its spare areas (pages_per_block * spare_size bytes)."""
        g = self.geometry
        sp_len = g.pages_per_block * g.spare_size
        if len(data) != g.block_size:
            raise ValueError(f"poke_block needs {g.block_size} bytes of data, got {len(data)}")
        if spare is not None and len(spare) != sp_len:
            raise ValueError(f"poke_block needs {sp_len} bytes of spare, got {len(spare)}")
        d = ffi.from_buffer(data)
        s = ffi.NULL if spare is None else ffi.from_buffer(spare)
        if lib.csim_poke_block(self._p(), block, d, s) != 0:
            raise SimError(f"csim_poke_block: bad block {block}")

    # ---- the device's own calls (counted, checked, time-modelled) ----
    def dev_read(self, page: int, off: int, length: int) -> tuple[int, bytes]:
        """dev->read: (result, data)."""
        d = self.dev
        buf = ffi.new("uint8_t[]", length)
        rc = d.read(d.ctx, page, off, buf, length)
        return rc, bytes(ffi.buffer(buf))

    def dev_read_spare(self, page: int, length: int) -> tuple[int, bytes]:
        """dev->read_spare: (result, spare bytes)."""
        d = self.dev
        if d.read_spare == ffi.NULL:
            raise SimError("this device has no spare area")
        buf = ffi.new("uint8_t[]", length)
        rc = d.read_spare(d.ctx, page, buf, length)
        return rc, bytes(ffi.buffer(buf))

    def dev_prog(self, page: int, off: int, data, spare=None) -> int:
        """dev->prog: result."""
        d = self.dev
        s = ffi.NULL if spare is None else ffi.from_buffer(spare)
        return d.prog(d.ctx, page, off, ffi.from_buffer(data), len(data), s,
                      0 if spare is None else len(spare))

    def dev_erase(self, block: int) -> int:
        """dev->erase: result."""
        d = self.dev
        return d.erase(d.ctx, block)

    def dev_sync(self) -> int:
        d = self.dev
        return DevResult.OK if d.sync == ffi.NULL else d.sync(d.ctx)

    def is_bad(self, block: int) -> bool:
        """dev->is_bad (False when the device has none)."""
        d = self.dev
        if d.is_bad == ffi.NULL:
            return False
        rc = d.is_bad(d.ctx, block)
        if rc < 0:
            raise SimError(f"is_bad({block}) = {rc}")
        return bool(rc)

    def mark_bad(self, block: int) -> int:
        d = self.dev
        return DevResult.OK if d.mark_bad == ffi.NULL else d.mark_bad(d.ctx, block)
