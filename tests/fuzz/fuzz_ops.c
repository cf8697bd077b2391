/*
 * Fuzz target "ops": API call sequences with a power cut. The input's bytes
 * choose the medium, the cut (which mutating device operation, and how it
 * tears) and then the calls and their arguments, three bytes per call, on a
 * freshly formatted volume: open, write, read, seek, truncate, close, remove,
 * rename, mkdir, sync, GC, ring files, sector I/O, attributes, fallocate,
 * remount.
 *
 * Until the cut, no call may report CAIRN_ERR_CORRUPT or CAIRN_ERR_IO (the
 * volume is sound and the device works). After it, the power comes back and
 * the volume must mount, pass cairn_check, list and read, and unmount.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAMES 4
#define MAX_CALLS 80
static const char *const names[NAMES] = {"/a", "/b", "/d/c", "/d/e"};

struct run {
    struct fz_vol v;
    int fd[NAMES];
    uint8_t buf[6000];
    uint32_t calls;
};

/* A call's result before the cut: a valid code, and neither CORRUPT nor IO. */
static void sound(struct run *r, long rc, const char *what)
{
    fz_check_rc(rc, what);
    if (csim_powered(r->v.sim) && (rc == CAIRN_ERR_CORRUPT || rc == CAIRN_ERR_IO))
        fz_fail("call %u: %s returned %s on a sound volume", r->calls, what,
                cairn_errname((int)rc));
}

static void close_all(struct run *r)
{
    uint32_t i;
    for (i = 0; i < NAMES; i++)
        r->fd[i] = -1;
}

static void pattern(uint8_t *buf, uint32_t len, uint32_t seed)
{
    uint32_t i;
    for (i = 0; i < len; i++)
        buf[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 8));
}

static void sector_calls(struct run *r, uint8_t a, uint8_t b)
{
    struct cairn_bd bd;
    int rc = cairn_bd_open(r->v.fs, &bd, "/bd", 256, 32);
    sound(r, rc, "bd_open");
    if (rc < 0)
        return;
    pattern(r->buf, 256u * 4u, a);
    sound(r, cairn_bd_write(&bd, a % 28u, r->buf, 1u + b % 4u), "bd_write");
    sound(r, cairn_bd_trim(&bd, b % 30u, 2), "bd_trim");
    sound(r, cairn_bd_read(&bd, 0, r->buf, 8), "bd_read");
    rc = cairn_bd_close(&bd);
    sound(r, rc, "bd_close");
    if (rc == CAIRN_ERR_NOSPC) /* the array stays open (cairn.h): give it up */
        sound(r, cairn_discard(r->v.fs, bd.fd), "discard");
}

static void remount(struct run *r)
{
    int rc = cairn_unmount(r->v.fs);
    sound(r, rc, "unmount");
    close_all(r);
    if (csim_powered(r->v.sim)) {
        rc = cairn_mount(r->v.fs, &r->v.cfg);
        sound(r, rc, "mount");
        if (rc != 0 && csim_powered(r->v.sim))
            fz_fail("call %u: remount failed: %s", r->calls, cairn_errname(rc));
    }
}

static void one_call(struct run *r, uint8_t op, uint8_t a, uint8_t b)
{
    cairn *fs = r->v.fs;
    uint32_t n = a % NAMES;
    int *fd = &r->fd[n];
    switch (op % 16u) {
    case 0:
        if (*fd >= 0)
            sound(r, cairn_close(fs, *fd), "close");
        *fd = cairn_open(fs, names[n], CAIRN_O_RDWR | CAIRN_O_CREAT |
                                           (b & 1 ? CAIRN_O_TRUNC : 0) |
                                           (b & 2 ? CAIRN_O_APPEND : 0));
        sound(r, *fd, "open");
        break;
    case 1: {
        uint32_t len = ((uint32_t)(a >> 2) * 97u + b) % (uint32_t)sizeof r->buf;
        pattern(r->buf, len, b);
        if (*fd >= 0)
            sound(r, cairn_write(fs, *fd, r->buf, (int32_t)len), "write");
        break;
    }
    case 2:
        if (*fd >= 0)
            sound(r, cairn_read(fs, *fd, r->buf, (int32_t)(b * 23u)), "read");
        break;
    case 3:
        if (*fd >= 0)
            sound(r, cairn_seek(fs, *fd, (int32_t)(b * 37u), CAIRN_SEEK_SET), "seek");
        break;
    case 4:
        if (*fd >= 0)
            sound(r, cairn_truncate(fs, *fd, (int32_t)(b * 29u)), "truncate");
        break;
    case 5: /* close; a close refused with NOSPC, and one in four, discarded */
        if (*fd >= 0) {
            long rc = b % 4u == 3u ? CAIRN_ERR_NOSPC : cairn_close(fs, *fd);
            if (b % 4u != 3u)
                sound(r, rc, "close");
            if (rc == CAIRN_ERR_NOSPC)
                sound(r, cairn_discard(fs, *fd), "discard");
        }
        *fd = -1;
        break;
    case 6:
        sound(r, cairn_remove(fs, names[n]), "remove");
        break;
    case 7:
        sound(r, cairn_rename(fs, names[n], names[b % NAMES]), "rename");
        break;
    case 8:
        sound(r, cairn_mkdir(fs, "/d"), "mkdir");
        break;
    case 9:
        if (*fd >= 0 && (b & 1))
            sound(r, cairn_file_sync(fs, *fd), "file_sync");
        else
            sound(r, cairn_sync(fs), "sync");
        break;
    case 10:
        sound(r, cairn_gc(fs, b), "gc");
        break;
    case 11:
        sound(r, cairn_ring_create(fs, names[n], (int32_t)(256u * (1u + b % 8u))),
              "ring_create");
        break;
    case 12:
        remount(r);
        break;
    case 13:
        sound(r, cairn_setattr(fs, names[n], b, r->buf, b % 9u), "setattr");
        break;
    case 14:
        sector_calls(r, a, b);
        break;
    default:
        if (*fd >= 0)
            sound(r, cairn_fallocate(fs, *fd, (int32_t)(b * 40u)), "fallocate");
        break;
    }
}

static void problem(void *arg, const char *text)
{
    (void)arg;
    fprintf(stderr, "fuzz: check: %s\n", text);
}

/* After the cut: mount, check, list and read, unmount. */
static void recover(struct run *r)
{
    struct cairn_check_report rep;
    int rc;
    csim_cut_cancel(r->v.sim);
    csim_power_on(r->v.sim);
    rc = cairn_mount(r->v.fs, &r->v.cfg);
    if (rc != 0)
        fz_fail("mount after the cut: %s", cairn_errname(rc));
    rc = cairn_check(r->v.fs, &rep, problem, NULL);
    if (rc != 0)
        fz_fail("cairn_check after the cut: %s (%u problems)", cairn_errname(rc),
                (unsigned)rep.errors);
    r->calls = 0;
    {
        uint32_t i;
        for (i = 0; i < NAMES; i++) {
            int fd = cairn_open(r->v.fs, names[i], CAIRN_O_RDONLY);
            sound(r, fd, "open after the cut");
            if (fd >= 0) {
                int32_t got;
                uint32_t rounds = 0;
                do
                    got = cairn_read(r->v.fs, fd, r->buf, (int32_t)sizeof r->buf);
                while (got > 0 && ++rounds < 16);
                sound(r, got, "read after the cut");
                sound(r, cairn_close(r->v.fs, fd), "close after the cut");
            }
        }
    }
    rc = cairn_unmount(r->v.fs);
    if (rc != 0)
        fz_fail("unmount after the cut: %s", cairn_errname(rc));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct run *r;
    struct csim_counters c;
    uint32_t cut;
    size_t pos;
    int rc;
    if (size < 3)
        return 0;
    r = (struct run *)calloc(1, sizeof *r);
    if (!r || fz_vol_new(&r->v, data[0] & 1u, data[0]) != 0)
        fz_fail("cannot make the volume");
    close_all(r);
    rc = cairn_format(r->v.fs, &r->v.cfg);
    if (rc == 0)
        rc = cairn_mount(r->v.fs, &r->v.cfg);
    if (rc != 0)
        fz_fail("format and mount: %s", cairn_errname(rc));
    cut = (uint32_t)(data[1] | (data[2] << 8));
    if (cut != 0xFFFFu) {
        csim_counters(r->v.sim, &c);
        csim_cut_at(r->v.sim, c.mutating_ops + cut, (enum csim_tear)((data[0] >> 1) % 3u));
    }
    for (pos = 3; pos + 3 <= size && r->calls < MAX_CALLS && csim_powered(r->v.sim);
         pos += 3) {
        r->calls++;
        one_call(r, data[pos], data[pos + 1], data[pos + 2]);
    }
    if (csim_powered(r->v.sim))
        sound(r, cairn_unmount(r->v.fs), "unmount");
    recover(r);
    fz_vol_free(&r->v);
    free(r);
    return 0;
}
