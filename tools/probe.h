/*
 * Reading what the tool needs of the on-disk format without the core:
 * - geometry detection: find a checkpoint header in a raw image and infer
 *   the page size, segment size, segment count and the layout (flat, or NAND
 *   pages with OOB) from it and from the image's length (docs/TOOL.md,
 *   "How the geometry is found");
 * - the newest checkpoint of a volume, read through its device, decoded
 *   (info, dump): header fields and the segment table.
 * The checkpoint layout is docs/FORMAT.md "Checkpoint" (src/format.h).
 */
#ifndef CAIRN_PROBE_H
#define CAIRN_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "cairn_device.h"
#include "format.h" /* src/: the format's numbers */

struct ckpt_hdr {
    uint16_t version;
    uint8_t flags, session; /* session: 0xFF, or a NOR session began after it */
    uint32_t seq, length, crc;
    uint32_t page_size, seg_pages, seg_count, node_size;
    uint32_t root, height, next_id;
    uint32_t log_seg, log_off, log_seq, clock;
    uint32_t head_seg[CN_CK_HEADS], head_page[CN_CK_HEADS];
};

struct ckpt_seg {
    uint32_t erase_count, stamp;
    uint16_t live;
    uint8_t state, flags;
};

/* CRC-32 as zlib computes it (the core's cn_crc32), for the tool's decoders. */
uint32_t probe_crc32(uint32_t crc, const uint8_t *p, size_t len);

/* Names of the table's segment states and flags (format.h). */
const char *ckpt_state_name(uint8_t state);
/* Flag names joined by ',' into buf ("-" for none). */
const char *ckpt_flag_names(uint8_t flags, char *buf, size_t size);
/* Was the checkpoint written by a clean unmount, with no session begun since? */
int ckpt_clean(const struct ckpt_hdr *h);
const char *ckpt_head_name(uint32_t h, char *buf, size_t size);

/* Decodes a header from its first CN_CK_HDR bytes; 0 when the magic,
 * the version this tool reads and every field are plausible, else -1. */
int ckpt_parse_header(const uint8_t *b, struct ckpt_hdr *h);

/* ---- geometry detection over a raw image ---- */

/* What the user said; 0 fields are unknown. */
struct detect_hints {
    uint32_t medium;   /* enum cairn_medium */
    uint32_t page;     /* page size */
    uint32_t block;    /* erase block, bytes of data */
    uint64_t size;     /* bytes of flash data (without OOB) */
    int have_oob;      /* oob below is given */
    uint32_t oob;      /* NAND: OOB bytes per page in the image */
    int block_device;  /* the target is a block device (medium BLOCK) */
};

struct detect_result {
    struct cairn_geometry geo;
    uint32_t oob;          /* NAND: OOB bytes per page in the image */
    uint64_t found_at;     /* image byte offset of the header used */
    struct ckpt_hdr hdr;   /* that header */
};

/* Reads `len` bytes at image offset `pos` (0 or -1). */
typedef int (*detect_read_fn)(void *arg, uint64_t pos, void *buf, size_t len);
typedef void (*detect_progress_fn)(void *arg, uint64_t done, uint64_t total);

/* Scans the image (`avail` bytes, at most its first DETECT_SCAN_MAX) for a
 * checkpoint that verifies and derives the geometry. 0, or -1 with a message
 * in err. */
#define DETECT_SCAN_MAX (1ull << 30)
int detect_geometry(detect_read_fn rd, void *arg, uint64_t avail, const struct detect_hints *hints,
                    struct detect_result *out, detect_progress_fn progress, void *parg,
                    char *err, size_t errlen);

/* ---- the newest checkpoint, through a device ---- */

struct ckpt {
    struct ckpt_hdr h;
    struct ckpt_seg *segs;   /* h.seg_count entries (malloc) */
    uint32_t anchor[2];      /* the anchor segments searched */
    uint32_t anchor_index;   /* 0 or 1: the anchor holding it */
    uint32_t slot;           /* its slot */
    uint32_t copy;           /* NAND: the copy that verified (0 or 1) */
    uint32_t valid[2];       /* slots that verify, per anchor */
    uint32_t slots;          /* slots per anchor */
    uint32_t ckpt_pages;     /* pages of one copy */
};

/* Reads every slot of the anchors (the first two segments with no block
 * marked bad) and keeps the newest checkpoint that verifies. node_size is
 * not needed: it is read. 0, or -1 with a message in err. */
int ckpt_find_newest(struct cairn_dev *dev, uint32_t seg_pages, uint32_t seg_count,
                     struct ckpt *out, char *err, size_t errlen);
void ckpt_free(struct ckpt *c);

#endif /* CAIRN_PROBE_H */
