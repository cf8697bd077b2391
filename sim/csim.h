/*
 * cairn flash simulator: device models behind struct cairn_dev, with rule
 * checking, operation counters, a time model, and fault injection (power cuts
 * with torn programs and erases, bad blocks, bit flips).
 *
 * Host-only code (uses malloc and stdio). Every random choice comes from the
 * seed given at creation, so a run is reproducible from (model, seed, ops).
 */
#ifndef CSIM_H
#define CSIM_H

#include <stddef.h>
#include <stdint.h>

#include "cairn_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct csim csim;

/* Modelled cost of operations, in nanoseconds (and bytes per second).
 * read:  read_setup_ns per call (NAND: per page touched, the array load)
 *        + len * 1e9 / read_bytes_per_s
 * prog:  prog_setup_ns (NOR, NAND: per page touched, one program command
 *        each; BLOCK: per call) + len * 1e9 / prog_bytes_per_s
 *        + prog_page_ns per page touched
 * erase: erase_ns per erase block
 * BLOCK (sd-tf) media add the card's internal work: ftl_prog_ns per internal
 * flash page programmed (host data and merge copies), ftl_erase_ns per
 * allocation unit erased. */
struct csim_cost {
    uint64_t read_setup_ns;
    uint64_t read_bytes_per_s;
    uint64_t prog_setup_ns;
    uint64_t prog_bytes_per_s;
    uint64_t prog_page_ns;
    uint64_t erase_ns;
    uint64_t ftl_prog_ns;
    uint64_t ftl_erase_ns;
};

/* The card model of BLOCK media (used when medium == CAIRN_MEDIUM_BLOCK). */
struct csim_ftl {
    uint32_t au_bytes;        /* allocation unit (4 MiB on sd-tf) */
    uint32_t flash_page_bytes;/* internal program unit (16 KiB on sd-tf) */
    uint32_t open_aus;        /* AUs the card can keep open at once */
};

struct csim_counters {
    uint64_t read_calls;
    uint64_t read_bytes;       /* data + spare bytes read */
    uint64_t prog_calls;
    uint64_t prog_bytes;       /* data + spare bytes programmed */
    uint64_t prog_pages;       /* pages touched by programs */
    uint64_t erases;
    uint64_t spare_reads;      /* read_spare calls (also counted in read_calls) */
    uint64_t mutating_ops;     /* prog + erase calls since creation or power-on
                                  (the index a power cut is placed at) */
    uint64_t time_ns;          /* modelled device time */
    uint64_t ftl_prog_pages;   /* BLOCK: internal flash pages programmed */
    uint64_t ftl_copy_pages;   /* BLOCK: of which merge copies */
    uint64_t ftl_erases;       /* BLOCK: internal AU erases */
    uint64_t ftl_merges;       /* BLOCK: merges forced by the host's pattern */
    uint64_t corrected;        /* reads reported CAIRN_DEV_CORRECTED */
    uint64_t uncorrectable;    /* reads reported CAIRN_DEV_UNCORRECTABLE */
    uint64_t violations;       /* rule violations (each also failed its call) */
};

struct csim_options {
    const char *image_path; /* NULL: storage in RAM; else backed by this file */
    int create;             /* with image_path: 1 = make a new (erased) image,
                               0 = open an existing one (geometry from it) */
    uint64_t seed;          /* drives every random choice of the simulator */
    uint32_t block_count;   /* 0 = the model's; else use fewer/more blocks */
    uint32_t blocks_per_lblock; /* 0 = the model's default */
};

/* Model names: "nor-m25p16", "nor-w25q128", "nand-dhara", "nand-jffs2",
 * "sd-tf". Returns NULL for an unknown name or a bad option (see csim_error). */
csim *csim_new(const char *model, const struct csim_options *opt);
/* Any geometry and cost table; ftl may be NULL unless medium is BLOCK. */
csim *csim_new_custom(const struct cairn_geometry *geo,
                      const struct csim_cost *cost, const struct csim_ftl *ftl,
                      const struct csim_options *opt);
/* Frees everything; with an image file, saves it first. */
void csim_free(csim *sim);
/* Writes the image file now (no-op for RAM storage). 0 or -1. */
int csim_save(csim *sim);
/* Last error text of csim_new/csim_new_custom/csim_save (static string). */
const char *csim_error(void);

/* Names of the models, NULL-terminated. */
const char *const *csim_model_names(void);
/* The model's geometry and cost; 0, or -1 for an unknown name. */
int csim_model_info(const char *model, struct cairn_geometry *geo,
                    struct csim_cost *cost, struct csim_ftl *ftl);

/* The device to hand to cairn_mount/cairn_format (owned by sim). */
struct cairn_dev *csim_dev(csim *sim);
const struct cairn_geometry *csim_geometry(const csim *sim);

/* Counters and modelled time. */
void csim_counters(const csim *sim, struct csim_counters *out);
void csim_reset_counters(csim *sim); /* mutating_ops is kept */
/* Erases of one erase block over the device's life (kept in image files). */
uint32_t csim_erase_count(const csim *sim, uint32_t block);
/* Text of the last rule violation ("" if none). */
const char *csim_last_violation(const csim *sim);

/* ---- power cuts ---- */
enum csim_tear {
    CSIM_TEAR_PREFIX = 0, /* a torn program writes a prefix of its bytes;
                             a torn erase erases a prefix of its pages */
    CSIM_TEAR_RANDOM = 1, /* a torn program programs a random subset of the
                             bits it would have cleared; a torn erase leaves
                             the block reading erased, but pages programmed
                             into it later show bits flipped 1->0 (NOR) or
                             ECC errors (NAND) until it is erased again */
    CSIM_TEAR_NONE = 2,   /* the cut falls before the operation: nothing */
    CSIM_TEAR_EMPTY = 3   /* the operation began and stored nothing: a torn
                             program's page reads erased, yet on NAND it was
                             programmed once (a second program breaks the
                             page's program count); a torn erase erased
                             nothing. PREFIX's zero-byte case, on demand. */
};
/* Cut power at the mutating operation with index `op_index` (counted as in
 * counters.mutating_ops: the next mutating op has index mutating_ops). That
 * operation is torn as `tear` says; it and every later call fail with
 * CAIRN_DEV_IO until csim_power_on. */
void csim_cut_at(csim *sim, uint64_t op_index, enum csim_tear tear);
void csim_cut_cancel(csim *sim);
int csim_powered(const csim *sim); /* 0 after a cut */
void csim_power_on(csim *sim);     /* data stays as the cut left it */

/* ---- bad blocks and failures ---- */
void csim_set_factory_bad(csim *sim, uint32_t block); /* is_bad reports 1 */
/* Erases of `block` from now on fail (CAIRN_DEV_ERASE_FAIL) after `erases`
 * more successful ones; programs into it then fail too. */
void csim_wear_out_after(csim *sim, uint32_t block, uint32_t erases);
/* The block is worn out now: every later program or erase in it fails (its
 * data stays readable), as after csim_wear_out_after's last erase. */
void csim_wear_out_now(csim *sim, uint32_t block);
/* The mutating op with this index fails (PROG_FAIL or ERASE_FAIL) without
 * changing anything, and its block goes bad (later programs/erases fail). */
void csim_fail_op(csim *sim, uint64_t op_index);
/* Forget every pending csim_fail_op (csim_power_on forgets them too: op
 * indexes restart at 0 after a power-on). */
void csim_fail_cancel(csim *sim);
/* Per page read: probability (parts per million) that the read is reported
 * CAIRN_DEV_CORRECTED (data intact) or CAIRN_DEV_UNCORRECTABLE (data with
 * flipped bits). */
void csim_set_bitflips(csim *sim, uint32_t corrected_ppm,
                       uint32_t uncorrectable_ppm);

/* ---- direct access for tests and tools (no counters, no rules) ---- */
/* Copies page data (and spare, if spare != NULL) out / in. */
int csim_peek(const csim *sim, uint32_t page, void *data, void *spare);
int csim_poke(csim *sim, uint32_t page, const void *data, const void *spare);
/* The same for a whole erase block in one call (loading or dumping a whole
 * device, python/cairn/_image.py): data is pages_per_block * page_size bytes,
 * spare (optional) pages_per_block * spare_size bytes, both page after page.
 * 0, or -1 for a block beyond the device (or no memory for the poke). */
int csim_peek_block(const csim *sim, uint32_t block, void *data, void *spare);
int csim_poke_block(csim *sim, uint32_t block, const void *data, const void *spare);

#ifdef __cplusplus
}
#endif

#endif /* CSIM_H */
