/*
 * A cairn device over a raw image: a regular file or a block device holding
 * exactly the bytes of the flash, optionally starting at a byte offset
 * inside a bigger file (docs/TOOL.md, "Raw images").
 *
 * Layout in the file, from `offset`:
 * - NOR and BLOCK: the pages back to back (page p at p * page_size).
 * - NAND: each page's data followed by its OOB bytes, as nanddump --oob
 *   writes them (page p at p * (page_size + oob)). OOB bytes 0-1 are the
 *   bad-block marker (a block is bad when byte 0 of its first page's OOB is
 *   not 0xFF); cairn's spare area (geo.spare_size = oob - 2 bytes) starts at
 *   OOB byte 2. With oob == 0 the image is flat and cairn has no spare.
 *
 * Semantics kept honest: erase sets the block (with its OOB) to 0xFF; on
 * NOR and NAND a program may only clear bits (a program that would turn a
 * 0 bit into 1 is refused with CAIRN_DEV_RULE and writes nothing, as the
 * simulator does); BLOCK programs overwrite whole sectors. NAND's page
 * order and NOP are not tracked (the simulator checks them in the tests).
 */
#ifndef CAIRN_IMGDEV_H
#define CAIRN_IMGDEV_H

#include <stdint.h>

#include "cairn_device.h"

#define IMGDEV_MARKER_BYTES 2u /* OOB bytes before cairn's spare area */

struct imgdev {
    struct cairn_dev dev;  /* hand &dev to cairn (dev.ctx points here) */
    int fd;                /* not owned: the caller opens and closes it */
    uint64_t offset;       /* where the image starts in the file */
    uint32_t oob;          /* NAND: OOB bytes per page in the image */
    uint32_t stride;       /* bytes per page in the image: page_size + oob */
    uint64_t image_bytes;  /* bytes the image spans */
    int read_only;         /* programs and erases fail with CAIRN_DEV_IO */
    int no_sync;           /* sync does not fdatasync (a throw-away image) */
    uint64_t bytes_read;   /* counters (progress reports) */
    uint64_t bytes_written;
    uint64_t rule_violations;
    void (*on_io)(void *arg); /* called after each read/prog/erase, may be NULL */
    void *on_io_arg;
    uint8_t *scratch;      /* one erase block of the image (stride x pages) */
};

/* Sets up d over fd (geometry checked: page and block sizes, the size of the
 * image). oob is 0 unless geo->medium is NAND; geo->spare_size is derived
 * from it (oob - 2, or 0). 0 or -1 (out of memory, bad geometry). */
int imgdev_init(struct imgdev *d, int fd, uint64_t offset, const struct cairn_geometry *geo,
                uint32_t oob, int read_only);
void imgdev_fini(struct imgdev *d);

/* Writes 0xFF over the whole image, OOB included (a new image; progress
 * through on_io). 0, or -1 with errno set. */
int imgdev_erase_all(struct imgdev *d);

/* Bytes of the image for a geometry: pages x (page_size + oob). */
uint64_t imgdev_bytes(const struct cairn_geometry *geo, uint32_t oob);

#endif /* CAIRN_IMGDEV_H */
