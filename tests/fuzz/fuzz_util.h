/*
 * Shared parts of the fuzz targets (tests/fuzz): a small simulated volume, a
 * device wrapper that bounds the work of one input, images read from and
 * written to the inputs' page-list format, and the fixed walk of the API
 * that runs on a mounted volume.
 *
 * A target is one function, LLVMFuzzerTestOneInput. It is linked either with
 * libFuzzer (clang, `make fuzz`) or with replay.c (any compiler, CTest), so
 * a failure is reported the same way in both: the harness calls fz_fail,
 * which prints and aborts.
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "cairn.h"
#include "csim.h"

/* Device operations one input may issue. Past this the input hangs: a loop
 * over flash-derived data that keeps the device busy never ends. A loop that
 * does no I/O is caught by the time limit instead (libFuzzer's -timeout, the
 * replay's alarm). */
#define FZ_OP_LIMIT 2000000u

/* The two volumes: NOR (256 B pages, 64 per block, 12 blocks) and NAND
 * (512 B pages with 32 B spare, 32 per block, 12 blocks, one program per
 * page). Both are the smallest cairn formats: 11 segments is the floor. */
enum fz_medium { FZ_NOR = 0, FZ_NAND = 1 };

struct fz_vol {
    csim *sim;
    struct cairn_dev wrap; /* what the file system sees */
    struct cairn_dev *in;  /* the simulator's device */
    uint64_t ops;
    uint32_t dev_errors; /* reads, programs, erases the device refused */
    struct cairn_config cfg;
    cairn *fs;
    void *mem;
    uint32_t page_bytes; /* data + spare of one page */
    uint32_t pages;
};

void fz_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* A fresh, erased volume with its own context and memory; 0 or -1. */
int fz_vol_new(struct fz_vol *v, int medium, uint64_t seed);
void fz_vol_free(struct fz_vol *v);

/* Page-list image format: records {page u16, len u16, bytes[len]} where the
 * bytes overwrite the start of the page (data then spare); every other byte
 * stays erased (0xFF). page and len are taken modulo the volume's sizes, so
 * every input is an image. */
void fz_image_load(struct fz_vol *v, const uint8_t *data, size_t size);
/* Writes the volume as page records (trailing 0xFF left out); returns the
 * bytes written, or 0 if cap is too small. */
size_t fz_image_save(struct fz_vol *v, uint8_t *out, size_t cap);

/* A cairn call's result: 0 or more, or one of the cairn_err codes. */
void fz_check_rc(long rc, const char *what);

/* The fixed walk on a mounted volume: list every directory (bounded), stat
 * and read every file, then write, truncate, remove and rename some, use the
 * sector interface, set and read an attribute, collect garbage. Results are
 * only checked to be valid codes: a hostile image may make any call fail. */
void fz_walk(struct fz_vol *v);

#endif /* FUZZ_UTIL_H */
