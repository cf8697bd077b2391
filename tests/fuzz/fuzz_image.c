/*
 * Fuzz target "image": a hostile flash image. The input's first byte picks
 * the medium (bit 0: NOR or NAND) and whether the mount is read-only (bit 1);
 * the rest is a page list (fuzz_util.h) laid on an erased volume. The target
 * mounts it and, when that works, runs the fixed walk of the API
 * (fz_walk: list, stat, read every file, write, truncate, remove, rename,
 * sector I/O, attributes, GC, cairn_check), unmounts and mounts again.
 *
 * Every call must return a valid code, touch the device only inside its
 * geometry, and finish within FZ_OP_LIMIT device operations (and the time
 * limit): any of these failing aborts, which libFuzzer and the replay driver
 * report. Built with CAIRN_FUZZ_NO_CRC, CRCs read from flash are not checked,
 * so mutations reach the parsers behind them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_vol v;
    int rc;
    if (size < 1)
        return 0;
    if (fz_vol_new(&v, data[0] & 1u, 1) != 0)
        fz_fail("cannot make the volume");
    fz_image_load(&v, data + 1, size - 1);
    v.cfg.read_only = (uint8_t)((data[0] >> 1) & 1u);
    rc = cairn_mount(v.fs, &v.cfg);
    fz_check_rc(rc, "mount");
    if (getenv("FZ_VERBOSE"))
        fprintf(stderr, "image: mount %s\n", cairn_errname(rc));
    if (rc == 0) {
        fz_walk(&v);
        fz_check_rc(cairn_unmount(v.fs), "unmount");
        rc = cairn_mount(v.fs, &v.cfg);
        fz_check_rc(rc, "remount");
        if (rc == 0) {
            struct cairn_check_report rep;
            fz_check_rc(cairn_check(v.fs, &rep, NULL, NULL), "check after remount");
            fz_check_rc(cairn_unmount(v.fs), "unmount");
        }
    }
    fz_vol_free(&v);
    return 0;
}
