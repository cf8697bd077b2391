/*
 * Shared support of the core tests: random numbers, small simulated volumes,
 * file system set-up (format, mount, remount, check), file helpers.
 */
#ifndef TSUPPORT_H
#define TSUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cairn.h"
#include "csim.h"
#include "tcheck.h"

/* ---- environment ---- */
/* CAIRN_TEST_SCALE (default 1, at least 1): multiplies iteration counts. */
uint32_t t_scale(void);
/* Unsigned value of an environment variable, or def. */
uint64_t t_env_u64(const char *name, uint64_t def);
/* Prints the message and the summary line, then exits with status 1. */
void t_fatal(const char *fmt, ...) TC_FMT(1, 2);
/* The test's name for the summary line (set by t_begin). */
extern const char *t_name;
void t_begin(const char *name);

/* ---- random numbers (splitmix64; deterministic from the seed) ---- */
uint64_t t_rand(uint64_t *state);
uint32_t t_randn(uint64_t *state, uint32_t n); /* 0 .. n-1, n > 0 */
/* Deterministic bytes that differ with seed and position. */
void t_pattern(uint8_t *buf, size_t len, uint64_t seed);

/* ---- small simulated volumes ---- */
enum t_medium { T_NOR = 0, T_NAND = 1, T_BLOCK = 2, T_NAND_B4 = 3, T_NMEDIA = 4 };
extern const char *const t_medium_name[T_NMEDIA];
static inline int t_is_nand(int medium) { return medium == T_NAND || medium == T_NAND_B4; }
/* NOR: nor-w25q128, 256 blocks of 4 KiB, 8 per logical block (1 MiB; 32 KiB
 * segments hold 32 nodes: with 16 the GC of a nearly full volume could not
 * gain, see docs/DESIGN.md "Space").
 * NAND: nand-dhara, 64 blocks of 128 KiB, one per logical block (8 MiB).
 * NAND_B4: nand-dhara, 128 blocks, 4 per logical block (16 MiB): segments,
 * and so the anchors, of several erase blocks (ckpt.c block_anchors).
 * BLOCK: custom SD-like device, 512 B sectors, 64 per block, 64 blocks,
 * 32 KiB allocation units (2 MiB). Exits through t_fatal on failure. */
csim *t_sim_new(int medium, uint64_t seed);
/* csim_new with the given block counts; t_fatal on failure. */
csim *t_sim_model(const char *model, uint32_t block_count,
                  uint32_t blocks_per_lblock, uint64_t seed);

/* ---- a file system on a simulated device ---- */
struct tfs {
    csim *sim;
    struct cairn_config cfg;
    cairn *fs;
    void *mem; /* own memory for cfg.mem when own_mem was set */
    int mounted;
    /* t_fs_free CHECKs that the simulator saw no rule violation (a program
     * or erase breaking the medium's rules) unless this is set. */
    int allow_violations;
};
/* Context memory; with own_mem the test supplies cfg.mem (so a mount that is
 * abandoned after a power cut leaks nothing). Takes ownership of sim. */
void t_fs_init(struct tfs *t, csim *sim, int own_mem);
/* cairn_format then cairn_mount; t_fatal on failure. */
void t_fs_format_mount(struct tfs *t);
int t_fs_mount(struct tfs *t);
int t_fs_unmount(struct tfs *t);
/* Unmount, mount and cairn_check, each CHECKed. Returns 0 when all passed. */
int t_fs_remount(struct tfs *t, const char *label);
/* cairn_check, printing its problems under label. Returns its result. */
int t_fs_check(struct tfs *t, const char *label);
/* CHECKs that the simulator saw no rule violation so far; 0 if none. */
int t_fs_no_violations(struct tfs *t, const char *label);
/* Forget the mount without unmounting (after a power cut). */
void t_fs_abandon(struct tfs *t);
/* Unmount if mounted and free everything (the sim too). CHECKs that the
 * simulator recorded no rule violation (unless allow_violations). */
void t_fs_free(struct tfs *t);

/* ---- device images (the non-blank pages, data and spare) ---- */
struct t_image {
    uint32_t npages, psize, ssize;
    uint32_t *pages; /* non-blank pages */
    uint8_t *data;   /* n * (psize + ssize) */
    uint32_t n;
};
void t_image_take(struct t_image *im, csim *sim);
/* Pokes the image's pages into sim (a fresh one of the same geometry). */
void t_image_put(const struct t_image *im, csim *sim);
void t_image_free(struct t_image *im);

/* ---- helpers ---- */
/* 1 if rc is one of the cairn_err codes (negative). */
int t_is_err(long rc);
const char *t_errname(long rc); /* cairn_errname, or "?" */
/* Whole file into *buf (malloc'd, caller frees) and *len. 0 or error. */
int t_read_file(cairn *fs, const char *path, uint8_t **buf, int32_t *len);
/* Creates or truncates path and writes data, then closes. 0 or error. */
int t_write_file(cairn *fs, const char *path, const void *data, int32_t len);
/* 1 if path holds exactly data (CHECKs and prints the first difference). */
int t_check_file(cairn *fs, const char *path, const void *data, int32_t len,
                 const char *label);
/* Prints up to 16 bytes around the first difference of two buffers. */
void t_print_diff(const uint8_t *a, int32_t alen, const uint8_t *b, int32_t blen);

/* Recursive listing: calls fn for every entry below path (not path itself),
 * with the full path; parents before children. Returns 0 or the first error.
 * Entries named "." and ".." are skipped. */
typedef int (*t_walk_fn)(void *arg, const char *path, const struct cairn_info *info);
int t_walk(cairn *fs, const char *path, t_walk_fn fn, void *arg);

#endif
