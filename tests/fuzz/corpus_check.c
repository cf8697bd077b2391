/*
 * The fuzz inputs still say something to this build (session 39). The image
 * seeds of corpus/image/ were written once, with checkpoint version 2, and
 * every mount has answered CAIRN_ERR_CORRUPT on them since the code stopped
 * reading version 2 (2026-11-27): fuzz_image then spent its runs on the
 * checkpoint's version check (245 edges covered against 2,272 with seeds that
 * mount), and the replay in CTest passed, since CORRUPT is a valid answer.
 *
 * Checked here, on the core the image target uses (CAIRN_FUZZ_NO_CRC):
 *  - every file of the image corpus mounts (read-write), cairn_check finds no
 *    problem in it, and it unmounts;
 *  - every file of the image regression inputs holds a checkpoint header of
 *    a version this code reads, so the parsers behind the checkpoint see it.
 * A failure says to write the inputs again: fuzz_seeds tests/fuzz/corpus.
 *
 * Usage: fuzz_corpus_check CORPUS_IMAGE_DIR REGRESS_IMAGE_DIR
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn.h"
#include "fuzz_util.h"

#define MAX_INPUT (4u << 20)
#define MAX_FILES 64

static uint8_t input[MAX_INPUT];

static size_t read_input(const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f)
        fz_fail("cannot open %s", path);
    n = fread(input, 1, sizeof input, f);
    fclose(f);
    if (n < 1)
        fz_fail("%s is empty", path);
    return n;
}

/* The input laid on its volume (the image target's first byte picks the
 * medium; the read-only bit is left out: the seeds are mounted writable). */
static void load(struct fz_vol *v, const char *path)
{
    size_t n = read_input(path);
    if (fz_vol_new(v, input[0] & 1u, 1) != 0)
        fz_fail("cannot make the volume");
    fz_image_load(v, input + 1, n - 1);
}

static void seed_mounts(const char *path)
{
    struct fz_vol v;
    struct cairn_check_report rep;
    int rc;
    load(&v, path);
    rc = cairn_mount(v.fs, &v.cfg);
    if (rc != 0)
        fz_fail("%s: mount %s: the seed is stale; write the corpus again "
                "(fuzz_seeds tests/fuzz/corpus)", path, cairn_errname(rc));
    rc = cairn_check(v.fs, &rep, NULL, NULL);
    if (rc != 0 || rep.errors != 0)
        fz_fail("%s: check %s, %u problems", path, cairn_errname(rc), (unsigned)rep.errors);
    if (cairn_unmount(v.fs) != 0)
        fz_fail("%s: unmount", path);
    printf("  ok  seed %s mounts, check clean (%u files, %u nodes)\n", path,
           (unsigned)rep.files, (unsigned)rep.nodes);
    fz_vol_free(&v);
}

static void regress_current(const char *path)
{
    struct fz_vol v;
    uint8_t *page;
    uint32_t p, found = 0, stale = 0;
    load(&v, path);
    page = (uint8_t *)malloc(v.page_bytes);
    if (!page)
        fz_fail("out of memory");
    for (p = 0; p < v.pages; p++) {
        uint32_t ver;
        csim_peek(v.sim, p, page, NULL);
        if (cn_get32(page + CN_CK_O_MAGIC) != CN_CK_MAGIC)
            continue;
        ver = cn_get16(page + CN_CK_O_VERSION);
        if (ver >= CN_CK_VERSION_OLDEST && ver <= CN_CK_VERSION)
            found++;
        else
            stale++;
    }
    free(page);
    if (found == 0)
        fz_fail("%s: no checkpoint of a version this code reads (%u of other versions): "
                "stale; write it again (fuzz_seeds tests/fuzz/corpus)", path, (unsigned)stale);
    printf("  ok  regression input %s holds %u checkpoint headers of versions %u-%u\n", path,
           (unsigned)found, (unsigned)CN_CK_VERSION_OLDEST, (unsigned)CN_CK_VERSION);
    fz_vol_free(&v);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Each file of dir, in name order; returns how many. */
static unsigned each_file(const char *dir, void (*fn)(const char *))
{
    static char names[MAX_FILES][512];
    char *order[MAX_FILES];
    DIR *d = opendir(dir);
    struct dirent *e;
    unsigned n = 0, i;
    if (!d)
        fz_fail("cannot open directory %s", dir);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == MAX_FILES)
            fz_fail("%s: more than %d files", dir, MAX_FILES);
        snprintf(names[n], sizeof names[n], "%s/%s", dir, e->d_name);
        order[n] = names[n];
        n++;
    }
    closedir(d);
    qsort(order, n, sizeof *order, by_name);
    for (i = 0; i < n; i++)
        fn(order[i]);
    return n;
}

int main(int argc, char **argv)
{
    unsigned seeds, regress;
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_corpus_check CORPUS_IMAGE_DIR REGRESS_IMAGE_DIR\n");
        return 2;
    }
    seeds = each_file(argv[1], seed_mounts);
    regress = each_file(argv[2], regress_current);
    if (seeds == 0 || regress == 0)
        fz_fail("no inputs found (%u seeds, %u regression inputs)", seeds, regress);
    printf("fuzz_corpus_check: %u seeds mount, %u regression inputs current\n", seeds, regress);
    return 0;
}
