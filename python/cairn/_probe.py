"""Geometry of a raw image, read from the image itself: the rules of the C
tool (tools/probe.c, docs/TOOL.md "How the geometry is found"), so that
cairn.Image opens what `cairn ls IMAGE` opens, with the same hints.

A checkpoint header (magic CRN1, docs/FORMAT.md "Checkpoint") gives the
page size, the pages per segment, the segment count and the index node size;
the image's length then tells flat (NOR, BLOCK) from NAND with OOB bytes.
The header must sit at a page boundary of that layout, at the start of a
checkpoint copy, and its checkpoint must pass its CRC (zlib's CRC-32, the
core's cn_crc32).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from . import ondisk
from ._ffi import lib
from ._sim import Geometry, Medium

MAGIC = ondisk.CK_MAGIC.to_bytes(4, "little")  # "CRN1"
HDR_BYTES = ondisk.CK_HDR  # the header; the segment table follows
SCAN_MAX = 1 << 30  # as the tool: the header is looked for in the first GiB
BLOCK_WRITE_UNIT = 262144  # the write unit assumed for BLOCK (sd-tf's)
_CRC_FIELD = slice(16, 20)  # zeroed while the CRC is computed



class ImageError(ValueError):
    """An image or a geometry that cairn.Image cannot use; the message says
    why (the C tool's wording where there is one)."""


@dataclass(frozen=True)
class Header:
    """The fields of a checkpoint header that the probe uses."""

    seq: int
    length: int
    crc: int
    page_size: int
    seg_pages: int
    seg_count: int
    node_size: int

    @property
    def pages(self) -> int:
        return self.seg_pages * self.seg_count

    @property
    def ckpt_pages(self) -> int:
        return -(-self.length // self.page_size)


@dataclass(frozen=True)
class Hints:
    """What the caller said about the image; None is unknown."""

    medium: int | None = None
    page: int | None = None
    block: int | None = None
    size: int | None = None
    oob: int | None = None  # NAND: OOB bytes per page in the image


@dataclass(frozen=True)
class Found:
    """A verified checkpoint and the geometry it implies."""

    geometry: Geometry  # spare_size is cairn's share of the OOB (oob - 2)
    oob: int
    header: Header
    found_at: int


def parse_header(buf, pos: int = 0) -> Header | None:
    """The header at buf[pos:], or None unless the magic, the version and every
    field are plausible (the checks of cairn.ondisk, the tool's
    ckpt_parse_header)."""
    full = ondisk.parse_header(bytes(buf[pos:pos + HDR_BYTES]))
    if full is None:
        return None
    return Header(full.seq, full.length, full.crc, full.page_size, full.seg_pages,
                  full.seg_count, full.node_size)


def _read(buf, pos: int, n: int) -> bytes:
    """n bytes at pos; past the end of the image reads erased (0xFF)."""
    chunk = bytes(buf[pos:pos + n])
    return chunk + b"\xff" * (n - len(chunk))


def _verifies(buf, h: Header, page: int, stride: int) -> bool:
    """Does the checkpoint whose first page is image page `page` pass its CRC?"""
    crc = 0
    for j in range(h.ckpt_pages):
        data = _read(buf, (page + j) * stride, h.page_size)
        if j == 0:
            again = parse_header(data)
            if again is None or again.seq != h.seq:
                return False
            data = data[:_CRC_FIELD.start] + bytes(4) + data[_CRC_FIELD.stop:]
            data = data[:7] + b"\0" + data[8:]  # the session byte is outside the CRC
        crc = zlib.crc32(data[:min(h.page_size, h.length - j * h.page_size)], crc)
    return crc == h.crc


def _plausible_start(buf, h: Header, oob: int) -> bool:
    """Could the image's first page start a cairn volume of this geometry (when
    the checkpoint found is in a later segment)? Erased, a checkpoint of the
    same geometry or a torn one (bits of the magic still set), or a NAND
    block marked bad."""
    page = _read(buf, 0, h.page_size + oob)
    data = page[:h.page_size]
    if data == b"\xff" * h.page_size or (oob > 0 and page[h.page_size] != 0xFF):
        return True
    other = parse_header(data)
    if other is not None:
        return (other.page_size, other.seg_pages, other.seg_count) == (
            h.page_size, h.seg_pages, h.seg_count)
    return all(data[i] & MAGIC[i] == MAGIC[i] for i in range(4))


_OOB_PER = (32, 64, 16, 8)  # usual OOB sizes: page / these


def _nand_oob_with_tail(h: Header, avail: int) -> int:
    """A NAND dump whose erase blocks run past the volume's last whole segment
    (zero config leaves them unused): the OOB bytes per page, of the usual
    sizes, that make the image whole pages with fewer than a segment's past
    the volume; 0: none (probe.c nand_oob_with_tail)."""
    for per in _OOB_PER:
        stride = h.page_size + h.page_size // per
        if avail % stride == 0 and 0 < avail // stride - h.pages < h.seg_pages:
            return h.page_size // per
    return 0


def _nand_layouts(h: Header, avail: int, whole_ok: bool) -> list[tuple[int, bool]]:
    """The NAND layouts with whole pages and with a tail, in the order to
    verify them: a whole-page OOB that is not a usual size after the tail's
    (a checkpoint at page 0 verifies in any stride; probe.c nand_layouts)."""
    whole = avail // h.pages - h.page_size if whole_ok else 0
    tail = _nand_oob_with_tail(h, avail)
    usual = whole in {h.page_size // per for per in _OOB_PER}
    out = []
    if whole_ok and (usual or not tail):
        out.append(whole)
    if tail:
        out.append(tail)
    if whole_ok and not usual and tail:
        out.append(whole)
    return [(oob, True) for oob in out]


def _layouts(h: Header, avail: int, hn: Hints) -> tuple[list[tuple[int, bool]], str]:
    """The layouts (oob, nand) to try for a header, best first, and the reason
    when there is none."""
    pages = h.pages
    flat = pages * h.page_size
    if hn.page and hn.page != h.page_size:
        return [], f"the checkpoint says {h.page_size}-byte pages, page= says {hn.page}"
    if hn.size and hn.size != flat:
        return [], f"the checkpoint says a volume of {flat} bytes, size= says {hn.size}"
    if hn.block and (h.seg_pages * h.page_size) % hn.block:
        return [], (f"block={hn.block} does not divide the checkpoint's segment "
                    f"({h.seg_pages * h.page_size} bytes)")
    out: list[tuple[int, bool]] = []
    if hn.medium == Medium.NAND:
        if hn.oob is not None:
            out.append((hn.oob, True))
        else:
            out = _nand_layouts(h, avail, avail % pages == 0 and avail // pages >= h.page_size)
        if not out:
            return [], (f"NAND image of {avail} bytes is not {pages} pages of data + OOB: "
                        "give spare= (OOB bytes per page) or size=")
    elif hn.medium or hn.oob == 0:
        out.append((0, False))
    elif hn.oob is not None:
        out.append((hn.oob, True))
    else:
        if avail == flat:
            out.append((0, False))
        else:
            out = _nand_layouts(h, avail, avail % pages == 0 and avail // pages > h.page_size
                                and avail // pages - h.page_size <= h.page_size // 4)
        if avail > flat and (not out or out[0][1]):  # a volume at the start of a longer image
            out.append((0, False))
    kept = [lay for lay in out if avail >= pages * (h.page_size + lay[0])]
    why = ""
    if not kept:
        why = (f"the image ({avail} bytes) is shorter than the volume its checkpoint describes "
               f"({pages} pages of {h.page_size} bytes of data): truncated, or a wrong offset")
    return kept, why


def _geometry(h: Header, oob: int, nand: bool, hn: Hints) -> Geometry:
    """The device geometry for a verified header and layout (make_geometry):
    the erase block is the segment unless block= says."""
    ppb = hn.block // h.page_size if hn.block else h.seg_pages
    if ppb == 0 or h.seg_pages % ppb:
        raise ImageError(f"block={hn.block} is not a whole number of pages dividing the segment")
    nop, write_unit = 0, 0
    if nand:
        medium, nop = Medium.NAND, 1
    elif hn.medium:
        medium = Medium(hn.medium)
    elif h.page_size == 512:
        medium = Medium.BLOCK
    elif h.page_size == 256:
        medium = Medium.NOR
    else:
        raise ImageError(f"flat image with {h.page_size}-byte pages: NOR or SD/eMMC? give "
                         "medium='nor' or medium='block' (or medium='nand', spare=0 for NAND "
                         "without OOB)")
    if medium == Medium.BLOCK:
        write_unit = fit_write_unit(BLOCK_WRITE_UNIT, h.page_size, h.seg_pages * h.page_size)
    bpl = h.seg_pages // ppb
    return Geometry(page_size=h.page_size, spare_size=max(oob - 2, 0), pages_per_block=ppb,
                    block_count=h.seg_count * bpl, medium=medium, max_partial_programs=nop,
                    write_unit=write_unit, blocks_per_lblock=bpl)


def fit_write_unit(write_unit: int, page_size: int, seg_bytes: int) -> int:
    """BLOCK: the write unit halved until segments are whole units (0: none)."""
    while write_unit > page_size and seg_bytes % write_unit:
        write_unit //= 2
    return write_unit if write_unit > page_size else 0


def detect(buf, hints: Hints = Hints()) -> Found:
    """Find the geometry of the raw image in buf (bytes, mmap, memoryview):
    the first checkpoint header, in the first GiB, that verifies under a
    layout the image's length allows. Raises ImageError with the reason."""
    avail = len(buf)
    limit = min(avail, SCAN_MAX)
    why = ""
    found_header = False
    pos = buf.find(MAGIC, 0, limit)
    while 0 <= pos and pos + HDR_BYTES <= limit:
        h = parse_header(buf, pos)
        if h is not None:
            found_header = True
            layouts, why_not = _layouts(h, avail, hints)
            why = why_not or why
            for oob, nand in layouts:
                problem = _check_at(buf, h, pos, oob, nand)
                if problem:
                    why = problem
                    continue
                return Found(_geometry(h, oob, nand, hints), oob, h, pos)
        pos = buf.find(MAGIC, pos + 1, limit)
    if found_header and why:
        raise ImageError(why)
    raise ImageError(f"no cairn checkpoint in the first {limit} bytes: not a cairn image "
                     f"(version {lib.CAIRN_DISK_VERSION}), or it does not start at the "
                     "beginning of the data")


def _check_at(buf, h: Header, pos: int, oob: int, nand: bool) -> str:
    """Why the header at pos is not the volume's under this layout ("" if it is)."""
    stride = h.page_size + oob
    page = pos // stride
    if pos % stride or page >= h.pages or (page % h.seg_pages) % h.ckpt_pages:
        advice = ("check spare= (OOB bytes per page)" if nand else
                  "a NAND image with OOB? give medium='nand' and spare= (OOB bytes per page)")
        return (f"a checkpoint at image byte {pos} is not where a "
                f"{'NAND' if nand else 'flat'} image puts one: {advice}")
    if not _verifies(buf, h, page, stride):
        return f"the checkpoint at image byte {pos} fails its CRC"
    if page >= h.seg_pages and not _plausible_start(buf, h, oob):
        return (f"a checkpoint is at image byte {pos} (in segment {page // h.seg_pages}), but "
                "the image does not start with a cairn segment (the volume starts "
                f"{pos - (page % h.seg_pages) * stride} bytes further?)")
    return ""
