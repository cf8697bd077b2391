/*
 * test_interop: a volume written on one machine mounts and reads back on
 * another of the other byte order or word size (the on-flash format and the
 * simulator's image files are byte-order independent).
 *
 *   test_interop write DIR    writes DIR/interop-nor.img, DIR/interop-nand.img
 *   test_interop verify DIR   mounts them, cairn_check, compares every file
 *   test_interop both DIR     both (the CTest run); DIR defaults to "."
 *
 * tests/cross.sh writes on the build machine and verifies under qemu-s390x
 * (big-endian) and qemu-arm (32-bit), then the reverse. The writer ends with
 * a synced but not unmounted tail, so the reader's mount replays a journal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "check.h"
#include "csim.h"

#define NFILES 6
static const int32_t file_len[NFILES] = {1, 300, 4096, 5000, 70000, 131};
static const char *const medium_model[2] = {"nor-m25p16", "nand-dhara"};
static const char *const medium_file[2] = {"interop-nor.img", "interop-nand.img"};

/* Byte i of file k: a function of both, the same on every machine. */
static uint8_t content(int k, int32_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + (uint32_t)k * 40503u;
    return (uint8_t)(x >> 13);
}

static void file_path(char *out, size_t size, int k)
{
    snprintf(out, size, "/dir%d/file-%d.bin", k % 2, k);
}

static csim *open_image(const char *dir, int med, int create)
{
    char path[1024];
    struct csim_options opt;
    csim *sim;
    memset(&opt, 0, sizeof opt);
    snprintf(path, sizeof path, "%s/%s", dir, medium_file[med]);
    opt.image_path = path;
    opt.create = create;
    opt.seed = 7;
    opt.block_count = med == 1 ? 64u : 0u;
    sim = csim_new(medium_model[med], &opt);
    CHECK(sim != NULL, "%s image %s (%s): %s", create ? "create" : "open", path,
          medium_model[med], sim ? "ok" : csim_error());
    return sim;
}

/* The mount's memory is ours (not cairn's malloc): the writer leaves its
 * last mount without unmounting, like a power cut after a sync. */
static void *config_for(struct cairn_config *cfg, csim *sim)
{
    void *mem;
    memset(cfg, 0, sizeof *cfg);
    cfg->dev = csim_dev(sim);
    cfg->mem_size = cairn_mem_size(cfg);
    mem = calloc(1, cfg->mem_size ? cfg->mem_size : 1u);
    if (!mem) {
        printf("out of memory\n");
        exit(2);
    }
    cfg->mem = mem;
    return mem;
}

static int write_file(cairn *fs, int k)
{
    char p[64];
    uint8_t buf[512];
    int32_t done = 0, n = 0;
    int fd;
    file_path(p, sizeof p, k);
    fd = cairn_open(fs, p, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC);
    while (fd >= 0 && done < file_len[k] && n >= 0) {
        int32_t i, chunk = file_len[k] - done < 512 ? file_len[k] - done : 512;
        for (i = 0; i < chunk; i++)
            buf[i] = content(k, done + i);
        n = cairn_write(fs, fd, buf, chunk);
        done += n > 0 ? n : 0;
    }
    if (fd >= 0)
        cairn_close(fs, fd);
    return fd >= 0 && done == file_len[k] ? 0 : -1;
}

static void write_medium(const char *dir, int med)
{
    struct cairn_config cfg;
    uint64_t ctx[CAIRN_CONTEXT_SIZE / 8];
    cairn *fs = (cairn *)ctx;
    uint8_t attr[4] = {0x12, 0x34, 0x56, 0x78};
    int k, rc, bad = 0;
    csim *sim = open_image(dir, med, 1);
    void *mem;
    if (!sim)
        return;
    mem = config_for(&cfg, sim);
    rc = cairn_format(fs, &cfg);
    if (rc == 0)
        rc = cairn_mount(fs, &cfg);
    CHECK(rc == 0, "%s: format and mount: %d", medium_model[med], rc);
    if (rc != 0) {
        csim_free(sim);
        free(mem);
        return;
    }
    cairn_mkdir(fs, "/dir0");
    cairn_mkdir(fs, "/dir1");
    for (k = 0; k < NFILES - 1; k++)
        bad += write_file(fs, k) != 0;
    bad += cairn_setattr(fs, "/dir0/file-0.bin", 9, attr, sizeof attr) != 0;
    bad += cairn_unmount(fs) != 0;
    CHECK(bad == 0, "%s: %d files, 2 directories, an attribute written; unmounted",
          medium_model[med], NFILES - 1);
    /* A tail that is synced but not unmounted: the reader replays it. */
    rc = cairn_mount(fs, &cfg);
    bad = rc != 0;
    if (rc == 0) {
        bad += write_file(fs, NFILES - 1) != 0;
        bad += cairn_rename(fs, "/dir1/file-3.bin", "/dir1/renamed.bin") != 0;
        bad += cairn_sync(fs) != 0;
    }
    CHECK(bad == 0, "%s: remounted, file %d written, file-3 renamed, synced (not unmounted)",
          medium_model[med], NFILES - 1);
    csim_free(sim); /* saves the image */
    free(mem);
}

static void verify_medium(const char *dir, int med)
{
    struct cairn_config cfg;
    struct cairn_check_report rep;
    uint64_t ctx[CAIRN_CONTEXT_SIZE / 8];
    cairn *fs = (cairn *)ctx;
    uint8_t buf[512], attr[8];
    int k, rc, bad_files = 0;
    csim *sim = open_image(dir, med, 0);
    void *mem;
    if (!sim)
        return;
    mem = config_for(&cfg, sim);
    rc = cairn_mount(fs, &cfg);
    CHECK(rc == 0, "%s: mount of the other machine's image: %d", medium_model[med], rc);
    if (rc != 0) {
        csim_free(sim);
        free(mem);
        return;
    }
    memset(&rep, 0, sizeof rep);
    rc = cairn_check(fs, &rep, NULL, NULL);
    CHECK(rc == 0 && rep.errors == 0 && rep.files == NFILES && rep.dirs >= 2,
          "%s: cairn_check %d, %lu errors, %lu files, %lu dirs", medium_model[med], rc,
          (unsigned long)rep.errors, (unsigned long)rep.files, (unsigned long)rep.dirs);
    for (k = 0; k < NFILES; k++) {
        char p[64];
        int32_t off = 0, n = 1, i;
        int fd, same = 1;
        if (k == 3)
            snprintf(p, sizeof p, "/dir1/renamed.bin");
        else
            file_path(p, sizeof p, k);
        fd = cairn_open(fs, p, CAIRN_O_RDONLY);
        while (fd >= 0 && n > 0) {
            n = cairn_read(fs, fd, buf, (int32_t)sizeof buf);
            for (i = 0; i < n && same; i++)
                same = buf[i] == content(k, off + i);
            off += n > 0 ? n : 0;
        }
        if (fd >= 0)
            cairn_close(fs, fd);
        if (fd < 0 || n < 0 || off != file_len[k] || !same) {
            bad_files++;
            printf("    %s: fd %d, read %ld of %ld bytes, content %s\n", p, fd, (long)off,
                   (long)file_len[k], same ? "equal" : "differs");
        }
    }
    CHECK(bad_files == 0, "%s: %d files read back byte for byte (%d differ)",
          medium_model[med], NFILES, bad_files);
    memset(attr, 0, sizeof attr);
    rc = cairn_getattr(fs, "/dir0/file-0.bin", 9, attr, sizeof attr);
    CHECK(rc == 4 && attr[0] == 0x12 && attr[3] == 0x78, "%s: attribute: %d bytes %02x..%02x",
          medium_model[med], rc, attr[0], attr[3]);
    rc = cairn_open(fs, "/dir1/file-3.bin", CAIRN_O_RDONLY);
    CHECK(rc == CAIRN_ERR_NOENT, "%s: the old name of the renamed file is gone: %d",
          medium_model[med], rc);
    rc = cairn_unmount(fs);
    CHECK(rc == 0, "%s: unmount: %d", medium_model[med], rc);
    csim_free(sim);
    free(mem);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "both";
    const char *dir = argc > 2 ? argv[2] : ".";
    int med, wr = strcmp(mode, "verify") != 0, rd = strcmp(mode, "write") != 0;
    printf("test_interop: %s%s%s in %s\n", wr ? "write" : "", wr && rd ? " and " : "",
           rd ? "verify" : "", dir);
    for (med = 0; med < 2; med++) {
        if (wr)
            write_medium(dir, med);
        if (rd)
            verify_medium(dir, med);
    }
    return check_done("test_interop");
}
