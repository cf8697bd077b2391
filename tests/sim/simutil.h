/* Small helpers shared by the simulator tests. */
#ifndef SIMUTIL_H
#define SIMUTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csim.h"

/* A model with `blocks` erase blocks (0 = the model's) and a seed. */
static inline csim *sim_open(const char *model, uint32_t blocks, uint64_t seed)
{
    struct csim_options o;
    csim *s;
    memset(&o, 0, sizeof(o));
    o.block_count = blocks;
    o.seed = seed;
    s = csim_new(model, &o);
    if (!s) {
        printf("FATAL: csim_new(%s): %s\n", model, csim_error());
        exit(2);
    }
    return s;
}

static inline struct csim_counters sim_cnt(const csim *s)
{
    struct csim_counters c;
    csim_counters(s, &c);
    return c;
}

static inline uint64_t sim_time(const csim *s) { return sim_cnt(s).time_ns; }
static inline uint64_t sim_viol(const csim *s) { return sim_cnt(s).violations; }

/* Deterministic test pattern. */
static inline void pattern(uint8_t *p, size_t n, uint32_t seed)
{
    size_t i;
    uint32_t x = seed * 2654435761u + 12345u;
    for (i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
}

static inline int all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("FATAL: out of memory\n");
        exit(2);
    }
    return p;
}

#endif
