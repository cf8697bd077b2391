/* A consumer of cairn built outside the project (tests/consumer/run.cmake):
 * formats and mounts a simulated NOR flash with buffers it passes itself
 * (so it also runs with CAIRN_NO_MALLOC), writes a file, remounts, reads
 * it back, and checks every return. Built with CAIRN_NO_* switches, it checks
 * that the left-out calls answer CAIRN_ERR_INVAL: the switches reached the
 * consumer's view of the headers. Prints "consumer: ok" and exits 0. */
#include <stdio.h>
#include <string.h>

#include "cairn.h"
#include "csim.h"

static int fails;

static void expect(int ok, const char *what, long got)
{
    if (!ok) {
        fprintf(stderr, "consumer: FAIL: %s (got %ld: %s)\n", what, got,
                got < 0 ? cairn_errname((int)got) : "-");
        fails++;
    }
}

int main(void)
{
    static uint64_t ctx[CAIRN_CONTEXT_SIZE / 8];
    static uint64_t mem[64 * 1024 / 8];
    cairn *fs = (cairn *)ctx;
    struct cairn_config cfg;
    char buf[32];
    int fd, err;
    int32_t n;
    uint32_t need;
    csim *sim = csim_new("nor-m25p16", NULL);

    if (sim == NULL) {
        fprintf(stderr, "consumer: csim_new: %s\n", csim_error());
        return 1;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.dev = csim_dev(sim);
    need = cairn_mem_size(&cfg);
    expect(need > 0 && need <= sizeof mem, "cairn_mem_size fits the buffer", (long)need);
    expect(cairn_context_size() <= sizeof ctx, "cairn_context_size fits", (long)cairn_context_size());
    cfg.mem = mem;
    cfg.mem_size = (uint32_t)sizeof mem;

    err = cairn_format(fs, &cfg);
    expect(err == 0, "format", err);
    err = cairn_mount(fs, &cfg);
    expect(err == 0, "mount", err);
    if (fails)
        goto out;
    fd = cairn_open(fs, "data.txt", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    expect(fd >= 0, "open for writing", fd);
    n = cairn_write(fs, fd, "consumer data", 13);
    expect(n == 13, "write 13 bytes", n);
    err = cairn_close(fs, fd);
    expect(err == 0, "close", err);

#ifdef CAIRN_NO_RING
    err = cairn_ring_create(fs, "ring", 4096);
    expect(err == CAIRN_ERR_INVAL, "CAIRN_NO_RING: ring_create is INVAL", err);
#endif
#ifdef CAIRN_NO_ATTRS
    err = cairn_setattr(fs, "data.txt", 1, "x", 1);
    expect(err == CAIRN_ERR_INVAL, "CAIRN_NO_ATTRS: setattr is INVAL", err);
#endif
#ifdef CAIRN_NO_BD
    {
        struct cairn_bd bd;
        err = cairn_bd_open(fs, &bd, "disk", 512, 16);
        expect(err == CAIRN_ERR_INVAL, "CAIRN_NO_BD: bd_open is INVAL", err);
    }
#endif
#ifdef CAIRN_NO_CHECK
    {
        struct cairn_check_report rep;
        err = cairn_check(fs, &rep, NULL, NULL);
        expect(err == CAIRN_ERR_INVAL, "CAIRN_NO_CHECK: check is INVAL", err);
    }
#endif

    err = cairn_unmount(fs);
    expect(err == 0, "unmount", err);
    err = cairn_mount(fs, &cfg);
    expect(err == 0, "mount again", err);
    if (fails)
        goto out;
    fd = cairn_open(fs, "data.txt", CAIRN_O_RDONLY);
    expect(fd >= 0, "open for reading", fd);
    memset(buf, 0, sizeof buf);
    n = cairn_read(fs, fd, buf, (int32_t)sizeof buf);
    expect(n == 13 && memcmp(buf, "consumer data", 13) == 0, "read back 13 bytes", n);
    err = cairn_close(fs, fd);
    expect(err == 0, "close", err);
    err = cairn_unmount(fs);
    expect(err == 0, "unmount", err);
out:
    csim_free(sim);
    if (fails) {
        printf("consumer: %d failed\n", fails);
        return 1;
    }
    printf("consumer: ok\n");
    return 0;
}
