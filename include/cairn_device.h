/*
 * cairn device interface: the only way the file system core touches flash.
 *
 * A port fills one struct cairn_dev with its geometry and callbacks. The core
 * never includes anything else of the port, and the simulator (sim/) implements
 * this very struct, so tests and benchmarks exercise the same code a board runs.
 *
 * Addressing: pages are numbered from 0 across the whole device
 * (page = block * pages_per_block + page_in_block). Offsets and lengths are in
 * bytes.
 */
#ifndef CAIRN_DEVICE_H
#define CAIRN_DEVICE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The medium's rules. The core adapts its write pattern to them. */
enum cairn_medium {
    /* Bits only go 1 -> 0 by programming; a page may be programmed many times
     * in pieces (partial programs); erase sets a whole block to 0xFF. */
    CAIRN_MEDIUM_NOR = 1,
    /* Pages are programmed only when erased, in increasing order inside a
     * block, at most max_partial_programs times each (NOP); spare area per
     * page; ECC in the driver; blocks can be or go bad. */
    CAIRN_MEDIUM_NAND = 2,
    /* Managed flash behind a sector interface (SD/TF, eMMC): any sector may be
     * rewritten, erase is optional (a trim/discard hint); large, aligned,
     * sequential writes keep the card's own FTL fast. */
    CAIRN_MEDIUM_BLOCK = 3
};

/* Result codes a driver returns. 0 and CAIRN_DEV_CORRECTED are success. */
enum cairn_dev_result {
    CAIRN_DEV_OK = 0,
    /* Read succeeded and the data is correct, but ECC corrected close to its
     * limit: the block should be scrubbed (its data moved). */
    CAIRN_DEV_CORRECTED = 1,
    /* Read data could not be corrected; the buffer content is unreliable. */
    CAIRN_DEV_UNCORRECTABLE = -1,
    /* The chip reported a failed program; the block should be retired. */
    CAIRN_DEV_PROG_FAIL = -2,
    /* The chip reported a failed erase; the block should be retired. */
    CAIRN_DEV_ERASE_FAIL = -3,
    /* Transport failure, power lost, or a request the driver refuses. */
    CAIRN_DEV_IO = -4,
    /* The request broke the medium's rules or the geometry (simulator and
     * checking drivers only): a bug in the caller, never a medium fault. */
    CAIRN_DEV_RULE = -5
};

struct cairn_geometry {
    uint32_t page_size;       /* data bytes per page (BLOCK: the sector size) */
    uint32_t spare_size;      /* spare bytes per page free for the FS; 0 = none */
    uint32_t pages_per_block; /* pages per erase block */
    uint32_t block_count;     /* erase blocks in the device */
    uint32_t medium;          /* enum cairn_medium */
    /* NAND: programs allowed per page before an erase (NOP), counting the
     * spare; 0 = unlimited (NOR). */
    uint32_t max_partial_programs;
    /* BLOCK: the write size, in bytes, that the medium prefers (aligned to
     * itself), e.g. 16 KiB or 256 KiB for SD cards; 0 = one page. */
    uint32_t write_unit;
    /* Erase blocks per logical block (the file system's allocation unit, a
     * segment); must divide block_count. 0 = chosen by cairn: the fewest
     * blocks a segment that work on this volume, dividing it unless a
     * smaller size leaves the user 1/32 of it more (the blocks past the last
     * whole segment then stay unused: docs/DESIGN.md "Segment size"); the
     * same geometry always gives the same choice, and a mount with 0 also
     * reads volumes formatted with 0 by cairn before that rule. A volume is
     * mounted with the value it was formatted with. */
    uint32_t blocks_per_lblock;
};

struct cairn_dev {
    void *ctx; /* passed back unchanged to every callback */
    struct cairn_geometry geo;

    /* Read len bytes starting at byte off of page `page`. off + len may run
     * past the page into the following pages of the same erase block (NAND:
     * never past the block's end; NOR and BLOCK: on into the following blocks,
     * as a NOR chip streams its whole array and a card reads many sectors): a
     * driver must accept that (loop internally if the chip cannot stream), so
     * contiguous pages cost one call. Returns CAIRN_DEV_OK,
     * CAIRN_DEV_CORRECTED or a negative result. */
    int (*read)(void *ctx, uint32_t page, uint32_t off, void *buf, uint32_t len);

    /* Read len bytes of the spare area of one page, from its start. NULL when
     * spare_size is 0. */
    int (*read_spare)(void *ctx, uint32_t page, void *buf, uint32_t len);

    /* Program data into page `page` at byte off.
     * - One page: off + len <= page_size. NOR accepts any piece (bits 1 -> 0);
     *   NAND counts every call against max_partial_programs; BLOCK requires
     *   off == 0 and len == page_size.
     * - Several pages: off == 0, len a multiple of page_size, all inside one
     *   erase block; spare must be NULL.
     * spare (may be NULL) is written with a one-page program, from the spare
     * area's start, spare_len <= spare_size. */
    int (*prog)(void *ctx, uint32_t page, uint32_t off, const void *data,
                uint32_t len, const void *spare, uint32_t spare_len);

    /* Erase one erase block (BLOCK: discard its sectors, which then read 0xFF). */
    int (*erase)(void *ctx, uint32_t block);

    /* Optional (NULL = never bad): 1 if the block is marked bad, 0 if good,
     * negative on error. */
    int (*is_bad)(void *ctx, uint32_t block);
    /* Optional: mark a block bad so that is_bad reports it from now on. */
    int (*mark_bad)(void *ctx, uint32_t block);
    /* Optional: make every completed program durable (flush the port's or the
     * card's write cache). */
    int (*sync)(void *ctx);
};

#ifdef __cplusplus
}
#endif

#endif /* CAIRN_DEVICE_H */
