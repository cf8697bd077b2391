/*
 * Internals of the flash simulator shared by the sim sources (not the API).
 */
#ifndef CSIM_INT_H
#define CSIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "csim.h"

/* Per erase block state flags (also stored in image files). */
enum {
    BF_MARKED = 1u,     /* is_bad reports 1 (factory bad or mark_bad) */
    BF_FACTORY = 2u,    /* factory bad: reads return 0x00 */
    BF_WORN = 4u,       /* programs and erases fail */
    BF_WEAK = 8u,       /* torn (RANDOM) erase: pages programmed read wrong */
    BF_WEAR_ARMED = 16u,/* csim_wear_out_after: wear_left erases remain */
    BF_STORED = 32u     /* image files only: block content follows */
};
#define BF_KNOWN 63u

/* Weak page: n (0 = clean) bit positions inside the page's data that read
 * wrong; chosen at the first program after the weak erase. */
struct weak_page {
    uint8_t n;
    uint32_t pos[3];
};

struct blk {
    /* data (block_bytes) | spare (ppb * spare_size) | program count per page
     * (ppb bytes, NAND); NULL = never written: reads 0xFF */
    uint8_t *mem;
    struct weak_page *weak; /* ppb entries, non-NULL iff BF_WEAK */
    uint32_t erase_count;
    uint32_t flags;
    uint32_t wear_left;
    uint32_t top; /* NAND: 1 + highest page programmed since erase; 0 none */
};

struct ftl_slot {
    uint32_t au;       /* allocation unit open in this slot */
    uint32_t wp;       /* write pointer, sectors from the AU's start */
    uint64_t stamp;    /* last use, for LRU */
    uint8_t used;
    uint8_t old_phys;  /* the AU had a data block when it was opened */
    uint8_t buf_host;  /* buffered flash page holds host data */
    uint8_t buf_copy;  /* buffered flash page holds copied data */
};

struct csim {
    struct cairn_dev dev;
    struct cairn_geometry geo;
    struct csim_cost cost;
    struct csim_ftl ftl;
    char model[32];
    char *path; /* image file, or NULL */

    uint32_t ps, ppb, block_bytes, total_pages;
    uint32_t spare_off, nop_off; /* offsets inside blk.mem */
    size_t mem_bytes;
    struct blk *blk;

    struct csim_counters c;
    char violation[200];

    int powered;
    int cut_armed;
    uint64_t cut_index;
    enum csim_tear cut_tear;
    uint64_t *fail_ops;
    size_t n_fail, cap_fail;
    uint32_t corr_ppm, unc_ppm;

    uint64_t seed;
    uint64_t rng_tear, rng_flip, rng_weak; /* independent streams */

    /* BLOCK card model */
    uint32_t spa, spf, au_count; /* sectors per AU, per flash page; AUs */
    uint64_t *live;              /* 1 bit per sector */
    uint8_t *has_data;           /* per AU: a data block exists */
    struct ftl_slot *slots;      /* ftl.open_aus */
    uint64_t ftl_stamp;
};

void csim_set_error_(const char *text);
const char *csim_validate_(const struct cairn_geometry *g,
                           const struct csim_ftl *f);
csim *csim_alloc_(const struct cairn_geometry *geo,
                  const struct csim_cost *cost, const struct csim_ftl *ftl,
                  const char *name, const struct csim_options *opt);
void csim_destroy_(csim *s);
csim *csim_load_(const char *path, const char *model,
                 const struct csim_options *opt);

uint64_t csim_rng_(uint64_t *state);
uint32_t csim_below_(uint64_t *state, uint32_t n);

/* Card FTL (csim_ftl.c). Sectors are device page numbers. */
void csim_ftl_write_(csim *s, uint32_t first, uint32_t n);
void csim_ftl_discard_(csim *s, uint32_t first, uint32_t n);
void csim_ftl_sync_(csim *s);
int csim_ftl_au_saved_(const csim *s, uint32_t au);

#endif /* CSIM_INT_H */
