/* hello.c: format a (simulated) flash chip, write a file, mount again, read it back. */
#include <stdio.h>
#include <string.h>

#include "cairn.h"
#include "csim.h" /* the simulator; on a board, the device is your port's struct cairn_dev */

/* Every call returns a negative cairn_err on failure: report it and stop. */
#define CHECK(call)                                                                \
    do {                                                                           \
        int32_t ret_ = (call);                                                     \
        if (ret_ < 0) {                                                            \
            fprintf(stderr, "hello: %s: %s\n", #call, cairn_strerror((int)ret_));  \
            goto out;                                                              \
        }                                                                          \
    } while (0)

int main(void)
{
    static uint64_t ctx[CAIRN_CONTEXT_SIZE / 8]; /* the file system's context */
    cairn *fs = (cairn *)ctx;
    char buf[16] = "";
    int fd, mounted = 0, status = 1;
    int32_t n;

    csim *sim = csim_new("nor-m25p16", NULL); /* a 2 MiB SPI NOR flash, in RAM */
    if (sim == NULL) {
        fprintf(stderr, "hello: %s\n", csim_error());
        return 1;
    }
    struct cairn_config cfg = { .dev = csim_dev(sim) }; /* zero fields take defaults */

    CHECK(cairn_format(fs, &cfg)); /* once, on a new device */
    CHECK(cairn_mount(fs, &cfg));
    mounted = 1;
    CHECK(fd = cairn_open(fs, "log.txt", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_APPEND));
    CHECK(n = cairn_write(fs, fd, "hello\n", 6));
    if (n != 6) { /* fewer bytes: the rest did not fit */
        fprintf(stderr, "hello: only %d of 6 bytes written\n", (int)n);
        goto out;
    }
    CHECK(cairn_file_sync(fs, fd)); /* durable on return */
    CHECK(cairn_close(fs, fd));
    CHECK(cairn_unmount(fs));
    mounted = 0;

    CHECK(cairn_mount(fs, &cfg));
    mounted = 1;
    CHECK(fd = cairn_open(fs, "log.txt", CAIRN_O_RDONLY));
    CHECK(n = cairn_read(fs, fd, buf, (int32_t)sizeof buf - 1));
    CHECK(cairn_close(fs, fd));
    CHECK(cairn_unmount(fs));
    mounted = 0;
    if (n != 6 || memcmp(buf, "hello\n", 6) != 0) {
        fprintf(stderr, "hello: read back %d bytes: \"%s\"\n", (int)n, buf);
        goto out;
    }
    printf("log.txt: %s", buf);
    status = 0;
out:
    if (mounted)
        (void)cairn_unmount(fs); /* after a failure: its error would add nothing */
    csim_free(sim);
    return status;
}
