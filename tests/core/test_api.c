/*
 * test_api: the public API's behaviour and every error code, on NOR, NAND and
 * BLOCK volumes (each section on a freshly formatted volume).
 *
 * Usage: test_api [nor|nand|block ...]   (default: all three)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsupport.h"

static const char *M;   /* medium name, in messages */
static int32_t PG;      /* page size */
static int MED;

#define RC(x, exp, what)                                                       \
    do {                                                                       \
        long rc_ = (long)(x);                                                  \
        CHECK(rc_ == (long)(exp), "%s: %s: got %ld %s, expected %ld %s", M, what, \
              rc_, t_errname(rc_), (long)(exp), t_errname((long)(exp)));       \
    } while (0)

static uint8_t *pat(int32_t len, uint64_t seed)
{
    uint8_t *b = (uint8_t *)malloc((size_t)len + 1);
    if (!b)
        t_fatal("out of memory");
    t_pattern(b, (size_t)len, seed);
    return b;
}

static void fresh(struct tfs *t)
{
    t_fs_init(t, t_sim_new(MED, 7), 0);
    t_fs_format_mount(t);
}

static void done(struct tfs *t, const char *section)
{
    if (t->mounted) {
        int rc = t_fs_check(t, section);
        CHECK(rc == 0, "%s: cairn_check at the end of %s: %d %s", M, section, rc,
              t_errname(rc));
    }
    t_fs_free(t);
    printf("  %s %s: done\n", M, section);
}

static void remount(struct tfs *t, const char *section)
{
    char label[80];
    snprintf(label, sizeof label, "%s %s", M, section);
    t_fs_remount(t, label);
}

/* ------------------------------------------------------------ sections */

static void s_open_flags(void)
{
    struct tfs t;
    cairn *fs;
    char buf[64];
    int fd;
    fresh(&t);
    fs = t.fs;
    RC(cairn_open(fs, "/o", CAIRN_O_RDONLY), CAIRN_ERR_NOENT, "open missing RDONLY");
    RC(cairn_open(fs, "/o", CAIRN_O_RDWR), CAIRN_ERR_NOENT, "open missing RDWR");
    RC(cairn_open(fs, "/o", 0), CAIRN_ERR_INVAL, "open with no access mode");
    RC(cairn_open(fs, "/o", CAIRN_O_CREAT), CAIRN_ERR_INVAL, "open CREAT, no access mode");
    fd = cairn_open(fs, "/o", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    CHECK(fd >= 0, "%s: open CREAT|WRONLY: %d %s", M, fd, t_errname(fd));
    RC(cairn_write(fs, fd, "hello", 5), 5, "write 5");
    RC(cairn_read(fs, fd, buf, 5), CAIRN_ERR_BADF, "read a WRONLY handle");
    RC(cairn_close(fs, fd), 0, "close");
    RC(cairn_open(fs, "/o", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_EXCL),
       CAIRN_ERR_EXIST, "open CREAT|EXCL of an existing file");
    fd = cairn_open(fs, "/o", CAIRN_O_RDONLY);
    CHECK(fd >= 0, "%s: open RDONLY: %d", M, fd);
    memset(buf, 0, sizeof buf);
    RC(cairn_read(fs, fd, buf, 10), 5, "read RDONLY");
    CHECK(memcmp(buf, "hello", 5) == 0, "%s: read back 'hello'", M);
    RC(cairn_write(fs, fd, "x", 1), CAIRN_ERR_BADF, "write a RDONLY handle");
    RC(cairn_truncate(fs, fd, 0), CAIRN_ERR_BADF, "truncate a RDONLY handle");
    RC(cairn_close(fs, fd), 0, "close");

    fd = cairn_open(fs, "/o", CAIRN_O_RDWR | CAIRN_O_APPEND);
    CHECK(fd >= 0, "%s: open RDWR|APPEND: %d", M, fd);
    RC(cairn_write(fs, fd, " world", 6), 6, "append");
    RC(cairn_tell(fs, fd), 11, "tell after append");
    RC(cairn_seek(fs, fd, 0, CAIRN_SEEK_SET), 0, "seek 0");
    RC(cairn_write(fs, fd, "X", 1), 1, "append after seek 0");
    RC(cairn_size(fs, fd), 12, "size after appends");
    RC(cairn_tell(fs, fd), 12, "tell after append at end");
    RC(cairn_close(fs, fd), 0, "close");
    t_check_file(fs, "/o", "hello worldX", 12, M);

    fd = cairn_open(fs, "/o", CAIRN_O_RDWR | CAIRN_O_CREAT);
    CHECK(fd >= 0, "%s: open RDWR|CREAT of an existing file", M);
    RC(cairn_size(fs, fd), 12, "CREAT without TRUNC keeps the content");
    RC(cairn_close(fs, fd), 0, "close");

    fd = cairn_open(fs, "/o", CAIRN_O_WRONLY | CAIRN_O_TRUNC);
    CHECK(fd >= 0, "%s: open WRONLY|TRUNC", M);
    RC(cairn_size(fs, fd), 0, "size after TRUNC");
    RC(cairn_write(fs, fd, "abc", 3), 3, "write after TRUNC");
    RC(cairn_close(fs, fd), 0, "close");
    t_check_file(fs, "/o", "abc", 3, M);

    fd = cairn_open(fs, "/n", CAIRN_O_RDWR | CAIRN_O_CREAT | CAIRN_O_EXCL);
    CHECK(fd >= 0, "%s: CREAT|EXCL of a new file: %d", M, fd);
    RC(cairn_size(fs, fd), 0, "new file is empty");
    RC(cairn_read(fs, fd, buf, 10), 0, "read of an empty file");
    RC(cairn_close(fs, fd), 0, "close");
    remount(&t, "open-flags");
    t_check_file(t.fs, "/o", "abc", 3, M);
    t_check_file(t.fs, "/n", "", 0, M);
    done(&t, "open-flags");
}

static void s_rw_seek(void)
{
    struct tfs t;
    cairn *fs;
    int32_t len = 3 * PG + 50, i;
    uint8_t *data = pat(len, 11), *buf = (uint8_t *)malloc((size_t)len + 2000);
    int fd, zeros;
    fresh(&t);
    fs = t.fs;
    fd = cairn_open(fs, "/s", CAIRN_O_RDWR | CAIRN_O_CREAT);
    CHECK(fd >= 0, "%s: open", M);
    RC(cairn_write(fs, fd, data, 0), 0, "write of 0 bytes");
    RC(cairn_write(fs, fd, data, -1), CAIRN_ERR_INVAL, "write of -1 bytes");
    RC(cairn_write(fs, fd, data, len), len, "write");
    RC(cairn_tell(fs, fd), len, "tell after write");
    RC(cairn_size(fs, fd), len, "size after write");
    RC(cairn_seek(fs, fd, 0, CAIRN_SEEK_SET), 0, "seek SET 0");
    RC(cairn_read(fs, fd, buf, len + 100), len, "read all");
    CHECK(memcmp(buf, data, (size_t)len) == 0, "%s: read back", M);
    RC(cairn_read(fs, fd, buf, 10), 0, "read at the end");
    RC(cairn_read(fs, fd, buf, 0), 0, "read of 0 bytes");
    RC(cairn_read(fs, fd, buf, -1), CAIRN_ERR_INVAL, "read of -1 bytes");
    RC(cairn_seek(fs, fd, -10, CAIRN_SEEK_CUR), len - 10, "seek CUR -10");
    RC(cairn_read(fs, fd, buf, 20), 10, "read over the end");
    CHECK(memcmp(buf, data + len - 10, 10) == 0, "%s: tail", M);
    RC(cairn_seek(fs, fd, -5, CAIRN_SEEK_END), len - 5, "seek END -5");
    RC(cairn_tell(fs, fd), len - 5, "tell");
    RC(cairn_seek(fs, fd, -1, CAIRN_SEEK_SET), CAIRN_ERR_INVAL, "seek SET -1");
    RC(cairn_seek(fs, fd, -(len + 1), CAIRN_SEEK_END), CAIRN_ERR_INVAL, "seek before 0");
    RC(cairn_seek(fs, fd, 0, 9), CAIRN_ERR_INVAL, "seek whence 9");
    RC(cairn_tell(fs, fd), len - 5, "tell unchanged by failed seeks");
    /* odd reads across page boundaries */
    for (i = 1; i < 4; i++) {
        RC(cairn_seek(fs, fd, i * PG - 3, CAIRN_SEEK_SET), i * PG - 3, "seek");
        RC(cairn_read(fs, fd, buf, 7), 7, "read across a page boundary");
        CHECK(memcmp(buf, data + i * PG - 3, 7) == 0, "%s: bytes across page %ld", M,
              (long)i);
    }
    /* overwrite inside, crossing a page boundary */
    RC(cairn_seek(fs, fd, PG - 10, CAIRN_SEEK_SET), PG - 10, "seek");
    RC(cairn_write(fs, fd, "0123456789ABCDEFGHIJ", 20), 20, "overwrite");
    memcpy(data + PG - 10, "0123456789ABCDEFGHIJ", 20);
    RC(cairn_size(fs, fd), len, "size unchanged by an overwrite");
    /* seek past the end: size unchanged until a write */
    RC(cairn_seek(fs, fd, len + 5000, CAIRN_SEEK_SET), len + 5000, "seek past the end");
    RC(cairn_size(fs, fd), len, "seek alone does not grow");
    RC(cairn_seek(fs, fd, len + 1000, CAIRN_SEEK_SET), len + 1000, "seek past the end");
    RC(cairn_write(fs, fd, "Z", 1), 1, "write past the end");
    RC(cairn_size(fs, fd), len + 1001, "size after the hole");
    RC(cairn_seek(fs, fd, len, CAIRN_SEEK_SET), len, "seek to the hole");
    RC(cairn_read(fs, fd, buf, 1001), 1001, "read the hole");
    for (zeros = 1, i = 0; i < 1000; i++)
        zeros &= buf[i] == 0;
    CHECK(zeros, "%s: a hole reads as zeros", M);
    CHECK(buf[1000] == 'Z', "%s: the byte after the hole", M);
    RC(cairn_file_sync(fs, fd), 0, "file_sync");
    RC(cairn_close(fs, fd), 0, "close");
    remount(&t, "rw-seek");
    fs = t.fs;
    fd = cairn_open(fs, "/s", CAIRN_O_RDONLY);
    RC(cairn_read(fs, fd, buf, len + 2000), len + 1001, "read after remount");
    CHECK(memcmp(buf, data, (size_t)len) == 0, "%s: data after remount", M);
    for (zeros = 1, i = 0; i < 1000; i++)
        zeros &= buf[len + i] == 0;
    CHECK(zeros && buf[len + 1000] == 'Z', "%s: hole after remount", M);
    RC(cairn_close(fs, fd), 0, "close");
    free(data);
    free(buf);
    done(&t, "rw-seek");
}

static void s_truncate(void)
{
    struct tfs t;
    cairn *fs;
    int32_t len = 2 * PG + 7, i;
    uint8_t *data = pat(len, 12), *buf = (uint8_t *)malloc((size_t)(6 * PG));
    int fd, ok;
    fresh(&t);
    fs = t.fs;
    fd = cairn_open(fs, "/t", CAIRN_O_RDWR | CAIRN_O_CREAT);
    RC(cairn_write(fs, fd, data, len), len, "write");
    RC(cairn_truncate(fs, fd, 5 * PG), 0, "truncate grow");
    RC(cairn_size(fs, fd), 5 * PG, "size after grow");
    RC(cairn_seek(fs, fd, 0, CAIRN_SEEK_SET), 0, "seek");
    RC(cairn_read(fs, fd, buf, 6 * PG), 5 * PG, "read grown file");
    ok = memcmp(buf, data, (size_t)len) == 0;
    for (i = len; i < 5 * PG; i++)
        ok &= buf[i] == 0;
    CHECK(ok, "%s: grown part reads zeros", M);
    RC(cairn_truncate(fs, fd, 100), 0, "truncate shrink");
    RC(cairn_size(fs, fd), 100, "size after shrink");
    RC(cairn_tell(fs, fd), 5 * PG, "truncate leaves the position");
    RC(cairn_read(fs, fd, buf, 10), 0, "read past the new end");
    RC(cairn_truncate(fs, fd, PG + 50), 0, "grow again");
    RC(cairn_seek(fs, fd, 0, CAIRN_SEEK_SET), 0, "seek");
    RC(cairn_read(fs, fd, buf, 6 * PG), PG + 50, "read");
    ok = memcmp(buf, data, 100) == 0;
    for (i = 100; i < PG + 50; i++)
        ok &= buf[i] == 0;
    CHECK(ok, "%s: shrink then grow reads zeros, not the old bytes", M);
    RC(cairn_truncate(fs, fd, -1), CAIRN_ERR_INVAL, "truncate -1");
    RC(cairn_truncate(fs, fd, 0), 0, "truncate 0");
    RC(cairn_size(fs, fd), 0, "size 0");
    RC(cairn_seek(fs, fd, 0, CAIRN_SEEK_SET), 0, "seek");
    RC(cairn_write(fs, fd, data, 300), 300, "write after truncate 0");
    RC(cairn_truncate(fs, fd, 200), 0, "truncate unsynced data");
    RC(cairn_close(fs, fd), 0, "close");
    remount(&t, "truncate");
    t_check_file(t.fs, "/t", data, 200, M);
    free(data);
    free(buf);
    done(&t, "truncate");
}

static void s_badf(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info;
    char buf[8];
    int fd, dd;
    fresh(&t);
    fs = t.fs;
    RC(cairn_read(fs, 99, buf, 1), CAIRN_ERR_BADF, "read fd 99");
    RC(cairn_write(fs, -1, buf, 1), CAIRN_ERR_BADF, "write fd -1");
    RC(cairn_seek(fs, 5, 0, CAIRN_SEEK_SET), CAIRN_ERR_BADF, "seek unused fd");
    RC(cairn_tell(fs, 5), CAIRN_ERR_BADF, "tell unused fd");
    RC(cairn_size(fs, 5), CAIRN_ERR_BADF, "size unused fd");
    RC(cairn_truncate(fs, 5, 0), CAIRN_ERR_BADF, "truncate unused fd");
    RC(cairn_file_sync(fs, 5), CAIRN_ERR_BADF, "file_sync unused fd");
    RC(cairn_fstat(fs, 5, &info), CAIRN_ERR_BADF, "fstat unused fd");
    RC(cairn_close(fs, 5), CAIRN_ERR_BADF, "close unused fd");
    RC(cairn_close(fs, 1000000), CAIRN_ERR_BADF, "close fd 1000000");
    RC(cairn_readdir(fs, 5, &info), CAIRN_ERR_BADF, "readdir unused");
    RC(cairn_closedir(fs, 5), CAIRN_ERR_BADF, "closedir unused");
    RC(cairn_rewinddir(fs, -3), CAIRN_ERR_BADF, "rewinddir -3");
    fd = cairn_open(fs, "/f", CAIRN_O_RDWR | CAIRN_O_CREAT);
    dd = cairn_opendir(fs, "/");
    CHECK(fd >= 0 && dd >= 0, "%s: open + opendir", M);
    RC(cairn_readdir(fs, fd, &info), CAIRN_ERR_BADF, "readdir on a file handle");
    RC(cairn_read(fs, dd, buf, 1), CAIRN_ERR_BADF, "read on a directory handle");
    RC(cairn_write(fs, dd, buf, 1), CAIRN_ERR_BADF, "write on a directory handle");
    RC(cairn_close(fs, dd), CAIRN_ERR_BADF, "close on a directory handle");
    RC(cairn_closedir(fs, fd), CAIRN_ERR_BADF, "closedir on a file handle");
    RC(cairn_closedir(fs, dd), 0, "closedir");
    RC(cairn_close(fs, fd), 0, "close");
    RC(cairn_close(fs, fd), CAIRN_ERR_BADF, "close twice");
    RC(cairn_write(fs, fd, buf, 1), CAIRN_ERR_BADF, "write after close");
    RC(cairn_closedir(fs, dd), CAIRN_ERR_BADF, "closedir twice");
    done(&t, "badf");
}

static void s_stat_id(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info, i2;
    uint8_t *data = pat(1234, 13), buf[1300];
    uint32_t id, did;
    int fd, rc;
    fresh(&t);
    fs = t.fs;
    RC(t_write_file(fs, "/st", data, 1234), 0, "write /st");
    memset(&info, 0, sizeof info);
    RC(cairn_stat(fs, "/st", &info), 0, "stat");
    CHECK(info.type == CAIRN_TYPE_FILE && info.size == 1234 && info.id != 0 &&
              strcmp(info.name, "st") == 0,
          "%s: stat /st: type %u size %ld id %lu name '%s'", M, (unsigned)info.type,
          (long)info.size, (unsigned long)info.id, info.name);
    id = info.id;
    RC(cairn_mkdir(fs, "/sd"), 0, "mkdir");
    RC(cairn_stat(fs, "/sd", &i2), 0, "stat dir");
    CHECK(i2.type == CAIRN_TYPE_DIR && i2.size == 0 && i2.id != id && i2.id != 0,
          "%s: stat dir: type %u size %ld id %lu", M, (unsigned)i2.type, (long)i2.size,
          (unsigned long)i2.id);
    did = i2.id;
    RC(cairn_stat(fs, "/", &i2), 0, "stat /");
    CHECK(i2.type == CAIRN_TYPE_DIR, "%s: / is a directory", M);
    RC(cairn_stat(fs, "/missing", &i2), CAIRN_ERR_NOENT, "stat missing");
    RC(cairn_stat(fs, "/missing/x", &i2), CAIRN_ERR_NOENT, "stat below missing");

    fd = cairn_open_id(fs, id, CAIRN_O_RDONLY);
    CHECK(fd >= 0, "%s: open_id: %d %s", M, fd, t_errname(fd));
    RC(cairn_read(fs, fd, buf, 1300), 1234, "read by id");
    CHECK(memcmp(buf, data, 1234) == 0, "%s: content by id", M);
    RC(cairn_fstat(fs, fd, &i2), 0, "fstat");
    CHECK(i2.id == id && i2.size == 1234 && i2.type == CAIRN_TYPE_FILE,
          "%s: fstat id %lu size %ld", M, (unsigned long)i2.id, (long)i2.size);
    RC(cairn_close(fs, fd), 0, "close");
    fd = cairn_open_id(fs, id, CAIRN_O_RDWR);
    CHECK(fd >= 0, "%s: open_id RDWR", M);
    RC(cairn_write(fs, fd, "abc", 3), 3, "write by id");
    RC(cairn_size(fs, fd), 1234, "size");
    RC(cairn_write(fs, fd, "de", 2), 2, "write by id");
    RC(cairn_fstat(fs, fd, &i2), 0, "fstat");
    RC(i2.size, 1234, "fstat size");
    RC(cairn_close(fs, fd), 0, "close");
    memcpy(data, "abcde", 5);
    t_check_file(fs, "/st", data, 1234, M);
    rc = cairn_open_id(fs, did, CAIRN_O_RDONLY);
    CHECK(rc < 0 && t_is_err(rc), "%s: open_id of a directory: %d %s (expected an error)",
          M, rc, t_errname(rc));
    if (rc >= 0)
        cairn_close(fs, rc);
    else
        printf("  %s: open_id of a directory returns %s\n", M, t_errname(rc));
    RC(cairn_open_id(fs, 0x0FFFFFF0u, CAIRN_O_RDONLY), CAIRN_ERR_NOENT, "open_id of an unused id");

    RC(cairn_rename(fs, "/st", "/sd/st2"), 0, "rename");
    RC(cairn_stat(fs, "/sd/st2", &i2), 0, "stat renamed");
    CHECK(i2.id == id, "%s: the id is stable across a rename (%lu vs %lu)", M,
          (unsigned long)i2.id, (unsigned long)id);
    remount(&t, "stat-id");
    fs = t.fs;
    RC(cairn_stat(fs, "/sd/st2", &i2), 0, "stat after remount");
    CHECK(i2.id == id, "%s: the id is stable across a remount", M);
    fd = cairn_open_id(fs, id, CAIRN_O_RDONLY);
    CHECK(fd >= 0, "%s: open_id after remount", M);
    RC(cairn_close(fs, fd), 0, "close");
    RC(cairn_remove(fs, "/sd/st2"), 0, "remove");
    RC(cairn_open_id(fs, id, CAIRN_O_RDONLY), CAIRN_ERR_NOENT, "open_id of a removed file");
    remount(&t, "stat-id");
    RC(cairn_open_id(t.fs, id, CAIRN_O_RDONLY), CAIRN_ERR_NOENT,
       "open_id of a removed file after remount");
    free(data);
    done(&t, "stat-id");
}

static void s_remove(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info;
    int rc;
    fresh(&t);
    fs = t.fs;
    RC(t_write_file(fs, "/f", "x", 1), 0, "create");
    RC(cairn_mkdir(fs, "/d"), 0, "mkdir");
    RC(cairn_mkdir(fs, "/e"), 0, "mkdir");
    RC(t_write_file(fs, "/e/g", "y", 1), 0, "create in dir");
    RC(cairn_remove(fs, "/f"), 0, "remove file");
    RC(cairn_stat(fs, "/f", &info), CAIRN_ERR_NOENT, "stat removed");
    RC(cairn_open(fs, "/f", CAIRN_O_RDONLY), CAIRN_ERR_NOENT, "open removed");
    RC(cairn_remove(fs, "/f"), CAIRN_ERR_NOENT, "remove again");
    RC(cairn_remove(fs, "/d"), 0, "remove empty dir");
    RC(cairn_stat(fs, "/d", &info), CAIRN_ERR_NOENT, "stat removed dir");
    RC(cairn_remove(fs, "/e"), CAIRN_ERR_NOTEMPTY, "remove non-empty dir");
    RC(cairn_remove(fs, "/nope"), CAIRN_ERR_NOENT, "remove missing");
    RC(cairn_remove(fs, "/nope/x"), CAIRN_ERR_NOENT, "remove below missing");
    rc = cairn_remove(fs, "/");
    CHECK(t_is_err(rc), "%s: remove / must fail: %d", M, rc);
    RC(cairn_remove(fs, "/e/g"), 0, "remove file in dir");
    RC(cairn_remove(fs, "/e"), 0, "remove now-empty dir");
    RC(t_write_file(fs, "/f", "zz", 2), 0, "re-create a removed name");
    remount(&t, "remove");
    fs = t.fs;
    RC(cairn_stat(fs, "/e", &info), CAIRN_ERR_NOENT, "removed dir after remount");
    t_check_file(fs, "/f", "zz", 2, M);
    done(&t, "remove");
}

static int count_entries(cairn *fs, const char *dir, const char *name)
{
    struct cairn_info info;
    int dd = cairn_opendir(fs, dir), n = 0;
    if (dd < 0)
        return -1;
    while (cairn_readdir(fs, dd, &info) == 1)
        if (!name || strcmp(info.name, name) == 0)
            n++;
    cairn_closedir(fs, dd);
    return n;
}

static void s_rename(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info;
    uint8_t *a = pat(3 * PG + 1, 21), *b = pat(777, 22);
    int rc;
    fresh(&t);
    fs = t.fs;
    RC(t_write_file(fs, "/r1", a, 3 * PG + 1), 0, "create r1");
    RC(t_write_file(fs, "/r3", b, 777), 0, "create r3");
    RC(cairn_rename(fs, "/r1", "/r2"), 0, "rename to a new name");
    RC(cairn_stat(fs, "/r1", &info), CAIRN_ERR_NOENT, "old name gone");
    t_check_file(fs, "/r2", a, 3 * PG + 1, M);
    RC(cairn_rename(fs, "/r2", "/r3"), 0, "rename over an existing file");
    RC(cairn_stat(fs, "/r2", &info), CAIRN_ERR_NOENT, "old name gone");
    t_check_file(fs, "/r3", a, 3 * PG + 1, M);
    RC(count_entries(fs, "/", "r3"), 1, "r3 listed once");
    RC(count_entries(fs, "/", NULL), 1, "one entry in /");
    RC(cairn_mkdir(fs, "/dd"), 0, "mkdir");
    RC(cairn_rename(fs, "/r3", "/dd/r3"), 0, "rename into a directory");
    t_check_file(fs, "/dd/r3", a, 3 * PG + 1, M);
    RC(cairn_rename(fs, "/dd", "/ee"), 0, "rename a directory");
    RC(cairn_stat(fs, "/dd", &info), CAIRN_ERR_NOENT, "old dir gone");
    RC(cairn_stat(fs, "/dd/r3", &info), CAIRN_ERR_NOENT, "old path gone");
    t_check_file(fs, "/ee/r3", a, 3 * PG + 1, M);
    RC(cairn_rename(fs, "/missing", "/x"), CAIRN_ERR_NOENT, "rename missing");
    RC(cairn_rename(fs, "/ee/r3", "/nodir/x"), CAIRN_ERR_NOENT, "rename into a missing dir");
    RC(cairn_mkdir(fs, "/ee/sub"), 0, "mkdir sub");
    RC(cairn_rename(fs, "/ee", "/ee/sub/x"), CAIRN_ERR_INVAL,
       "rename a directory into its own subdirectory");
    RC(cairn_rename(fs, "/ee", "/ee/y"), CAIRN_ERR_INVAL,
       "rename a directory into itself");
    RC(cairn_rename(fs, "/ee/r3", "/ee/r3"), 0, "rename onto itself");
    t_check_file(fs, "/ee/r3", a, 3 * PG + 1, M);
    rc = cairn_rename(fs, "/ee/r3", "/ee/sub");
    CHECK(t_is_err(rc), "%s: rename a file onto a directory must fail: %d", M, rc);
    if (rc < 0)
        printf("  %s: rename file onto dir: %s\n", M, t_errname(rc));
    RC(cairn_stat(fs, "/ee/sub", &info), 0, "dir still there");
    CHECK(info.type == CAIRN_TYPE_DIR, "%s: still a dir", M);
    t_check_file(fs, "/ee/r3", a, 3 * PG + 1, M);
    RC(t_write_file(fs, "/b2", b, 777), 0, "create");
    rc = cairn_rename(fs, "/ee/sub", "/b2");
    CHECK(t_is_err(rc), "%s: rename a directory onto a file must fail: %d", M, rc);
    t_check_file(fs, "/b2", b, 777, M);
    /* rename an open file: the handle follows the object */
    {
        int fd = cairn_open(fs, "/b2", CAIRN_O_RDWR);
        CHECK(fd >= 0, "%s: open", M);
        RC(cairn_rename(fs, "/b2", "/ee/b3"), 0, "rename an open file");
        RC(cairn_write(fs, fd, "QQ", 2), 2, "write through the handle");
        RC(cairn_close(fs, fd), 0, "close");
        memcpy(b, "QQ", 2);
        t_check_file(fs, "/ee/b3", b, 777, M);
    }
    remount(&t, "rename");
    fs = t.fs;
    t_check_file(fs, "/ee/r3", a, 3 * PG + 1, M);
    t_check_file(fs, "/ee/b3", b, 777, M);
    RC(count_entries(fs, "/", NULL), 1, "entries in / after remount");
    RC(count_entries(fs, "/ee", NULL), 3, "entries in /ee after remount");
    free(a);
    free(b);
    done(&t, "rename");
}

static void s_mkdir_paths(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info;
    int rc;
    fresh(&t);
    fs = t.fs;
    RC(cairn_mkdir(fs, "/m"), 0, "mkdir");
    RC(cairn_mkdir(fs, "/m"), CAIRN_ERR_EXIST, "mkdir existing");
    RC(cairn_mkdir(fs, "/m/n"), 0, "mkdir nested");
    RC(cairn_mkdir(fs, "/x/y"), CAIRN_ERR_NOENT, "mkdir below missing");
    RC(t_write_file(fs, "/m/f", "abc", 3), 0, "create in dir");
    RC(cairn_mkdir(fs, "/m/f"), CAIRN_ERR_EXIST, "mkdir over a file");
    RC(cairn_mkdir(fs, "/m/f/z"), CAIRN_ERR_NOTDIR, "mkdir below a file");
    RC(cairn_open(fs, "/m/f/z", CAIRN_O_RDONLY), CAIRN_ERR_NOTDIR, "open below a file");
    RC(cairn_open(fs, "/m/f/z", CAIRN_O_RDWR | CAIRN_O_CREAT), CAIRN_ERR_NOTDIR,
       "create below a file");
    RC(cairn_stat(fs, "/m/f/z", &info), CAIRN_ERR_NOTDIR, "stat below a file");
    RC(cairn_remove(fs, "/m/f/z"), CAIRN_ERR_NOTDIR, "remove below a file");
    RC(cairn_opendir(fs, "/m/f"), CAIRN_ERR_NOTDIR, "opendir of a file");
    RC(cairn_open(fs, "/m", CAIRN_O_WRONLY), CAIRN_ERR_ISDIR, "open a dir WRONLY");
    RC(cairn_open(fs, "/m", CAIRN_O_RDWR | CAIRN_O_CREAT), CAIRN_ERR_ISDIR,
       "open a dir RDWR|CREAT");
    RC(cairn_open(fs, "/m", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_EXCL),
       CAIRN_ERR_EXIST, "create over a dir with EXCL");
    rc = cairn_open(fs, "/m", CAIRN_O_RDONLY);
    if (rc >= 0)
        cairn_close(fs, rc);
    printf("  %s: open of a directory RDONLY returns %d %s (not specified)\n", M, rc,
           t_errname(rc));
    RC(cairn_stat(fs, "/m/n", &info), 0, "stat nested");
    CHECK(info.type == CAIRN_TYPE_DIR && strcmp(info.name, "n") == 0, "%s: nested dir", M);
    rc = cairn_stat(fs, "m/f", &info);
    printf("  %s: stat of a relative path \"m/f\" returns %s\n", M, t_errname(rc));
    remount(&t, "mkdir-paths");
    RC(cairn_mkdir(t.fs, "/m/n"), CAIRN_ERR_EXIST, "mkdir existing after remount");
    t_check_file(t.fs, "/m/f", "abc", 3, M);
    done(&t, "mkdir-paths");
}

static void s_names(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info;
    char n255[300], n256[300], path[700];
    int fd, found = 0, dd;
    fresh(&t);
    fs = t.fs;
    memset(n255, 'a', 255);
    n255[254] = 'z';
    n255[255] = 0;
    memset(n256, 'b', 256);
    n256[256] = 0;
    snprintf(path, sizeof path, "/%s", n255);
    fd = cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT);
    CHECK(fd >= 0, "%s: create a 255-byte name: %d %s", M, fd, t_errname(fd));
    RC(cairn_write(fs, fd, "long", 4), 4, "write");
    RC(cairn_close(fs, fd), 0, "close");
    RC(cairn_stat(fs, path, &info), 0, "stat 255-byte name");
    CHECK(strcmp(info.name, n255) == 0, "%s: stat returns the 255-byte name", M);
    dd = cairn_opendir(fs, "/");
    while (cairn_readdir(fs, dd, &info) == 1)
        found += strcmp(info.name, n255) == 0;
    cairn_closedir(fs, dd);
    CHECK(found == 1, "%s: readdir returns the 255-byte name once (%d)", M, found);
    snprintf(path, sizeof path, "/d%s", n255 + 1);
    RC(cairn_mkdir(fs, path), 0, "mkdir with a 255-byte name");
    snprintf(path, sizeof path, "/%s", n256);
    RC(cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT), CAIRN_ERR_NAMETOOLONG,
       "create a 256-byte name");
    RC(cairn_mkdir(fs, path), CAIRN_ERR_NAMETOOLONG, "mkdir a 256-byte name");
    RC(cairn_stat(fs, path, &info), CAIRN_ERR_NAMETOOLONG, "stat a 256-byte name");
    snprintf(path, sizeof path, "/%s", n255);
    {
        char to[700];
        snprintf(to, sizeof to, "/%s", n256);
        RC(cairn_rename(fs, path, to), CAIRN_ERR_NAMETOOLONG, "rename to a 256-byte name");
        snprintf(to, sizeof to, "/%s/x", n256);
        RC(cairn_open(fs, to, CAIRN_O_RDONLY), CAIRN_ERR_NAMETOOLONG,
           "a 256-byte middle component");
    }
    remount(&t, "names");
    snprintf(path, sizeof path, "/%s", n255);
    t_check_file(t.fs, path, "long", 4, M);
    done(&t, "names");
}

static void s_deep(void)
{
    struct tfs t;
    cairn *fs;
    char path[512], file[600];
    uint8_t *data = pat(2 * PG + 3, 31);
    int i;
    size_t n = 0;
    fresh(&t);
    fs = t.fs;
    path[0] = 0;
    for (i = 0; i < 30; i++) {
        n += (size_t)snprintf(path + n, sizeof path - n, "/d%02d", i);
        RC(cairn_mkdir(fs, path), 0, "mkdir deep");
    }
    snprintf(file, sizeof file, "%s/file", path);
    RC(t_write_file(fs, file, data, 2 * PG + 3), 0, "create at depth 30");
    remount(&t, "deep");
    fs = t.fs;
    t_check_file(fs, file, data, 2 * PG + 3, M);
    RC(count_entries(fs, path, NULL), 1, "entries at depth 30");
    RC(cairn_rename(fs, "/d00", "/top"), 0, "rename the top");
    {
        char moved[600];
        snprintf(moved, sizeof moved, "/top%s", file + 4);
        t_check_file(fs, moved, data, 2 * PG + 3, M);
        remount(&t, "deep");
        t_check_file(t.fs, moved, data, 2 * PG + 3, M);
    }
    free(data);
    done(&t, "deep");
}

static void s_many(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info;
    char path[64];
    uint8_t data[64];
    int seen[500], i, dd, r, bad = 0, n;
    fresh(&t);
    fs = t.fs;
    RC(cairn_mkdir(fs, "/many"), 0, "mkdir");
    for (i = 0; i < 500; i++) {
        snprintf(path, sizeof path, "/many/file%04d", i);
        t_pattern(data, sizeof data, (uint64_t)i);
        r = t_write_file(fs, path, data, 8 + i % 50);
        if (r != 0)
            bad++;
    }
    CHECK(bad == 0, "%s: creating 500 files: %d failed", M, bad);
    for (int pass = 0; pass < 2; pass++) {
        memset(seen, 0, sizeof seen);
        dd = cairn_opendir(fs, "/many");
        CHECK(dd >= 0, "%s: opendir", M);
        bad = 0;
        n = 0;
        if (pass == 1) { /* read 10, rewind, then all */
            for (i = 0; i < 10; i++)
                cairn_readdir(fs, dd, &info);
            RC(cairn_rewinddir(fs, dd), 0, "rewinddir");
        }
        while ((r = cairn_readdir(fs, dd, &info)) == 1) {
            int k;
            if (!strcmp(info.name, ".") || !strcmp(info.name, ".."))
                continue;
            n++;
            if (sscanf(info.name, "file%d", &k) != 1 || k < 0 || k >= 500 ||
                info.type != CAIRN_TYPE_FILE || info.size != 8 + k % 50) {
                bad++;
                continue;
            }
            seen[k]++;
        }
        RC(r, 0, "readdir end");
        RC(cairn_closedir(fs, dd), 0, "closedir");
        for (i = 0; i < 500; i++)
            bad += seen[i] != 1;
        CHECK(bad == 0 && n == 500, "%s: readdir of 500 files: %d entries, %d wrong", M, n,
              bad);
    }
    for (bad = 0, i = 0; i < 500; i++) {
        snprintf(path, sizeof path, "/many/file%04d", i);
        if (cairn_stat(fs, path, &info) != 0 || info.size != 8 + i % 50)
            bad++;
    }
    CHECK(bad == 0, "%s: stat of 500 files: %d wrong", M, bad);
    for (i = 0; i < 500; i += 2) {
        snprintf(path, sizeof path, "/many/file%04d", i);
        if (cairn_remove(fs, path) != 0)
            bad++;
    }
    CHECK(bad == 0, "%s: removing 250 files", M);
    remount(&t, "many");
    fs = t.fs;
    memset(seen, 0, sizeof seen);
    dd = cairn_opendir(fs, "/many");
    n = 0;
    while (cairn_readdir(fs, dd, &info) == 1) {
        int k;
        if (!strcmp(info.name, ".") || !strcmp(info.name, ".."))
            continue;
        n++;
        if (sscanf(info.name, "file%d", &k) == 1 && k >= 0 && k < 500)
            seen[k]++;
    }
    cairn_closedir(fs, dd);
    for (bad = 0, i = 0; i < 500; i++)
        bad += seen[i] != (i % 2);
    CHECK(bad == 0 && n == 250, "%s: readdir after removing half: %d entries, %d wrong", M,
          n, bad);
    for (bad = 0, i = 0; i < 500; i++) {
        snprintf(path, sizeof path, "/many/file%04d", i);
        r = cairn_stat(fs, path, &info);
        bad += (i % 2) ? r != 0 : r != CAIRN_ERR_NOENT;
    }
    CHECK(bad == 0, "%s: stat after removing half: %d wrong", M, bad);
    for (i = 1; i < 500; i += 46) { /* odd: still there */
        snprintf(path, sizeof path, "/many/file%04d", i);
        t_pattern(data, sizeof data, (uint64_t)i);
        t_check_file(fs, path, data, 8 + i % 50, M);
    }
    done(&t, "many");
}

static void s_dirs(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_info info;
    int dd, r, n = 0, files = 0, dirs = 0;
    fresh(&t);
    fs = t.fs;
    dd = cairn_opendir(fs, "/");
    CHECK(dd >= 0, "%s: opendir /", M);
    while ((r = cairn_readdir(fs, dd, &info)) == 1)
        if (strcmp(info.name, ".") && strcmp(info.name, ".."))
            n++;
    CHECK(r == 0 && n == 0, "%s: empty root lists nothing (%d, %d)", M, r, n);
    RC(cairn_readdir(fs, dd, &info), 0, "readdir after the end");
    RC(cairn_closedir(fs, dd), 0, "closedir");
    RC(cairn_opendir(fs, "/missing"), CAIRN_ERR_NOENT, "opendir missing");
    RC(t_write_file(fs, "/file", "12345", 5), 0, "create");
    RC(cairn_mkdir(fs, "/dir"), 0, "mkdir");
    RC(cairn_opendir(fs, "/file"), CAIRN_ERR_NOTDIR, "opendir a file");
    dd = cairn_opendir(fs, "/");
    n = 0;
    while ((r = cairn_readdir(fs, dd, &info)) == 1) {
        if (!strcmp(info.name, ".") || !strcmp(info.name, ".."))
            continue;
        n++;
        if (!strcmp(info.name, "file") && info.type == CAIRN_TYPE_FILE && info.size == 5)
            files++;
        if (!strcmp(info.name, "dir") && info.type == CAIRN_TYPE_DIR)
            dirs++;
    }
    CHECK(n == 2 && files == 1 && dirs == 1, "%s: readdir entries %d/%d/%d", M, n, files,
          dirs);
    RC(cairn_rewinddir(fs, dd), 0, "rewinddir");
    n = 0;
    while (cairn_readdir(fs, dd, &info) == 1)
        if (strcmp(info.name, ".") && strcmp(info.name, ".."))
            n++;
    RC(n, 2, "entries after rewinddir");
    RC(cairn_closedir(fs, dd), 0, "closedir");
    dd = cairn_opendir(fs, "/dir");
    CHECK(dd >= 0, "%s: opendir /dir", M);
    n = 0;
    while (cairn_readdir(fs, dd, &info) == 1)
        if (strcmp(info.name, ".") && strcmp(info.name, ".."))
            n++;
    RC(n, 0, "empty subdir");
    RC(cairn_closedir(fs, dd), 0, "closedir");
    done(&t, "dirs");
}

static void s_mfile(void)
{
    struct tfs t;
    cairn *fs;
    int fds[8], i, dd, fd;
    char path[16];
    fresh(&t);
    fs = t.fs;
    for (i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "/m%d", i);
        fds[i] = cairn_open(fs, path, CAIRN_O_RDWR | CAIRN_O_CREAT);
        CHECK(fds[i] >= 0, "%s: open %d of 4: %d %s", M, i, fds[i], t_errname(fds[i]));
    }
    RC(cairn_open(fs, "/m4", CAIRN_O_RDWR | CAIRN_O_CREAT), CAIRN_ERR_MFILE,
       "fifth open (max_open 4)");
    RC(cairn_open(fs, "/m0", CAIRN_O_RDONLY), CAIRN_ERR_MFILE, "fifth open, same file");
    RC(cairn_opendir(fs, "/"), CAIRN_ERR_MFILE, "opendir with 4 files open");
    RC(cairn_close(fs, fds[3]), 0, "close");
    dd = cairn_opendir(fs, "/");
    CHECK(dd >= 0, "%s: opendir after a close", M);
    RC(cairn_open(fs, "/m4", CAIRN_O_RDWR | CAIRN_O_CREAT), CAIRN_ERR_MFILE,
       "open with 3 files and a dir open");
    RC(cairn_closedir(fs, dd), 0, "closedir");
    fd = cairn_open(fs, "/m4", CAIRN_O_RDWR | CAIRN_O_CREAT);
    CHECK(fd >= 0, "%s: open after closedir", M);
    cairn_close(fs, fd);
    for (i = 0; i < 3; i++)
        RC(cairn_close(fs, fds[i]), 0, "close");
    /* a larger max_open */
    RC(t_fs_unmount(&t), 0, "unmount");
    t.cfg.max_open = 6;
    RC(t_fs_mount(&t), 0, "mount with max_open 6");
    fs = t.fs;
    for (i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "/m%d", i);
        fds[i] = cairn_open(fs, path, CAIRN_O_RDWR | CAIRN_O_CREAT);
        CHECK(fds[i] >= 0, "%s: open %d of 6: %d %s", M, i, fds[i], t_errname(fds[i]));
    }
    RC(cairn_open(fs, "/m6", CAIRN_O_RDWR | CAIRN_O_CREAT), CAIRN_ERR_MFILE,
       "seventh open (max_open 6)");
    for (i = 0; i < 6; i++)
        RC(cairn_close(fs, fds[i]), 0, "close");
    done(&t, "mfile");
}

static void s_attrs(void)
{
    struct tfs t;
    cairn *fs;
    uint8_t v[CAIRN_ATTR_MAX + 8], buf[CAIRN_ATTR_MAX + 8];
    int i, bad = 0;
    fresh(&t);
    fs = t.fs;
    t_pattern(v, sizeof v, 41);
    RC(t_write_file(fs, "/at", "x", 1), 0, "create");
    RC(cairn_mkdir(fs, "/atdir"), 0, "mkdir");
    RC(cairn_getattr(fs, "/at", 1, buf, sizeof buf), CAIRN_ERR_NOATTR, "getattr unset");
    RC(cairn_setattr(fs, "/at", 1, "abc", 3), 0, "setattr 3 bytes");
    memset(buf, 0, sizeof buf);
    RC(cairn_getattr(fs, "/at", 1, buf, sizeof buf), 3, "getattr");
    CHECK(memcmp(buf, "abc", 3) == 0, "%s: attr value", M);
    RC(cairn_setattr(fs, "/at", 1, v, CAIRN_ATTR_MAX), 0, "setattr CAIRN_ATTR_MAX bytes");
    RC(cairn_getattr(fs, "/at", 1, buf, sizeof buf), CAIRN_ATTR_MAX, "getattr max");
    CHECK(memcmp(buf, v, CAIRN_ATTR_MAX) == 0, "%s: max attr value", M);
    RC(cairn_setattr(fs, "/at", 1, v, CAIRN_ATTR_MAX + 1), CAIRN_ERR_INVAL,
       "setattr CAIRN_ATTR_MAX + 1 bytes");
    RC(cairn_getattr(fs, "/at", 1, buf, sizeof buf), CAIRN_ATTR_MAX,
       "a failed setattr leaves the value");
    memset(buf, 0xEE, sizeof buf);
    RC(cairn_getattr(fs, "/at", 1, buf, 10), CAIRN_ATTR_MAX, "getattr into 10 bytes");
    CHECK(memcmp(buf, v, 10) == 0 && buf[10] == 0xEE, "%s: getattr copies at most size", M);
    RC(cairn_setattr(fs, "/at", 0, "zero", 4), 0, "setattr type 0");
    RC(cairn_setattr(fs, "/at", 255, "", 0), 0, "setattr type 255, empty");
    RC(cairn_getattr(fs, "/at", 255, buf, sizeof buf), 0, "empty attr");
    RC(cairn_getattr(fs, "/at", 0, buf, sizeof buf), 4, "type 0");
    RC(cairn_getattr(fs, "/at", 2, buf, sizeof buf), CAIRN_ERR_NOATTR, "type 2 unset");
    RC(cairn_setattr(fs, "/atdir", 7, "dir", 3), 0, "setattr on a dir");
    RC(cairn_getattr(fs, "/atdir", 7, buf, sizeof buf), 3, "getattr on a dir");
    RC(cairn_getattr(fs, "/missing", 1, buf, sizeof buf), CAIRN_ERR_NOENT, "getattr missing");
    RC(cairn_setattr(fs, "/missing", 1, "a", 1), CAIRN_ERR_NOENT, "setattr missing");
    RC(cairn_removeattr(fs, "/missing", 1), CAIRN_ERR_NOENT, "removeattr missing");
    for (i = 10; i < 60; i++)
        bad += cairn_setattr(fs, "/at", (uint8_t)i, v + (i % 8), (uint32_t)(i % 40)) != 0;
    CHECK(bad == 0, "%s: 50 attributes", M);
    remount(&t, "attrs");
    fs = t.fs;
    RC(cairn_getattr(fs, "/at", 1, buf, sizeof buf), CAIRN_ATTR_MAX, "after remount");
    CHECK(memcmp(buf, v, CAIRN_ATTR_MAX) == 0, "%s: attr value after remount", M);
    for (bad = 0, i = 10; i < 60; i++)
        bad += cairn_getattr(fs, "/at", (uint8_t)i, buf, sizeof buf) != i % 40 ||
               memcmp(buf, v + (i % 8), (size_t)(i % 40)) != 0;
    CHECK(bad == 0, "%s: 50 attributes after remount (%d wrong)", M, bad);
    RC(cairn_removeattr(fs, "/at", 1), 0, "removeattr");
    RC(cairn_getattr(fs, "/at", 1, buf, sizeof buf), CAIRN_ERR_NOATTR, "removed attr");
    RC(cairn_removeattr(fs, "/at", 1), CAIRN_ERR_NOATTR, "removeattr again");
    RC(cairn_getattr(fs, "/at", 0, buf, sizeof buf), 4, "other attr kept");
    t_check_file(fs, "/at", "x", 1, M);
    RC(cairn_remove(fs, "/at"), 0, "remove the file");
    RC(t_write_file(fs, "/at", "y", 1), 0, "re-create");
    RC(cairn_getattr(fs, "/at", 0, buf, sizeof buf), CAIRN_ERR_NOATTR,
       "a new file has no attrs of the old one");
    remount(&t, "attrs");
    RC(cairn_getattr(t.fs, "/at", 1, buf, sizeof buf), CAIRN_ERR_NOATTR, "after remount");
    RC(cairn_getattr(t.fs, "/atdir", 7, buf, sizeof buf), 3, "dir attr after remount");
    done(&t, "attrs");
}

static void s_two_handles(void)
{
    struct tfs t;
    cairn *fs;
    int h1, h2;
    char buf[64];
    int32_t big = 3 * PG;
    uint8_t *data = pat(big, 51), *rd = (uint8_t *)malloc((size_t)big + 10);
    fresh(&t);
    fs = t.fs;
    h1 = cairn_open(fs, "/two", CAIRN_O_RDWR | CAIRN_O_CREAT);
    h2 = cairn_open(fs, "/two", CAIRN_O_RDWR);
    CHECK(h1 >= 0 && h2 >= 0 && h1 != h2, "%s: two handles %d %d", M, h1, h2);
    RC(cairn_write(fs, h1, "hello", 5), 5, "write h1");
    RC(cairn_size(fs, h2), 5, "h2 sees the size before sync");
    memset(buf, 0, sizeof buf);
    RC(cairn_read(fs, h2, buf, 10), 5, "h2 reads before sync");
    CHECK(memcmp(buf, "hello", 5) == 0, "%s: h2 sees h1's bytes", M);
    RC(cairn_seek(fs, h2, 2, CAIRN_SEEK_SET), 2, "seek h2");
    RC(cairn_write(fs, h2, "XY", 2), 2, "write h2");
    RC(cairn_seek(fs, h1, 0, CAIRN_SEEK_SET), 0, "seek h1");
    RC(cairn_read(fs, h1, buf, 10), 5, "h1 reads");
    CHECK(memcmp(buf, "heXYo", 5) == 0, "%s: h1 sees h2's bytes", M);
    RC(cairn_file_sync(fs, h1), 0, "sync h1");
    RC(cairn_seek(fs, h2, 0, CAIRN_SEEK_SET), 0, "seek h2");
    RC(cairn_read(fs, h2, buf, 10), 5, "h2 after sync");
    CHECK(memcmp(buf, "heXYo", 5) == 0, "%s: h2 after sync", M);
    RC(cairn_seek(fs, h1, 0, CAIRN_SEEK_END), 5, "seek end h1");
    RC(cairn_write(fs, h1, data, big), big, "big write h1");
    RC(cairn_size(fs, h2), 5 + big, "h2 size after big write");
    RC(cairn_seek(fs, h2, 5, CAIRN_SEEK_SET), 5, "seek h2");
    RC(cairn_read(fs, h2, rd, big + 10), big, "h2 reads the big write");
    CHECK(memcmp(rd, data, (size_t)big) == 0, "%s: h2 data", M);
    RC(cairn_file_sync(fs, h2), 0, "sync h2");
    RC(cairn_truncate(fs, h2, 3), 0, "truncate via h2");
    RC(cairn_size(fs, h1), 3, "h1 sees the truncate");
    RC(cairn_seek(fs, h1, 0, CAIRN_SEEK_SET), 0, "seek");
    RC(cairn_read(fs, h1, buf, 10), 3, "h1 reads after truncate");
    RC(cairn_close(fs, h2), 0, "close h2");
    RC(cairn_write(fs, h1, "END", 3), 3, "write h1 after h2 closed");
    RC(cairn_close(fs, h1), 0, "close h1");
    remount(&t, "two-handles");
    t_check_file(t.fs, "/two", "heXEND", 6, M);
    free(data);
    free(rd);
    done(&t, "two-handles");
}

/* A read-only mount after a cut replays the journal in RAM: every tree node
 * its records change stays dirty in the node cache, since nothing may be
 * written. 400 files created in 20 directories (their entries spread over
 * the tree's leaves) and synced, then a cut before the journal's commit:
 * a read-only mount (12 slots, 13, ... doubling past 64) with a cache too
 * small for the replay, or for a lookup after it, must say NOSPC (the data
 * is sound: not CORRUPT, as it said before session 42, where
 * `cairn fsck` of a SIGKILLed tar run on 1 MiB of nor-m25p16 refused the
 * volume), a larger cache must read every file, programming and erasing
 * nothing, and a writable mount must then recover it. */
static void s_readonly_replay(void)
{
    struct tfs t;
    struct csim_counters c;
    char path[40];
    uint32_t cache, worked = 0, mem_size;
    void *mem;
    int i, rc, bad;
    t_fs_init(&t, t_sim_new(MED, 7), 1); /* (abandoned below: the memory is ours) */
    t_fs_format_mount(&t);
    for (i = 0; i < 20; i++) {
        sprintf(path, "/dir%02d", i);
        RC(cairn_mkdir(t.fs, path), 0, "mkdir");
    }
    for (i = 0; i < 400; i++) {
        sprintf(path, "/dir%02d/file-%03d", i % 20, i);
        RC(t_write_file(t.fs, path, path, (int32_t)strlen(path)), 0, "create");
    }
    RC(cairn_sync(t.fs), 0, "sync");
    t_fs_abandon(&t); /* a cut */
    csim_reset_counters(t.sim);
    mem = t.cfg.mem;
    mem_size = t.cfg.mem_size;
    t.cfg.mem = NULL; /* cairn's, sized for each cache and freed by the unmount */
    t.cfg.mem_size = 0;
    for (cache = 12; cache <= 4096 && !worked; cache += cache < 64 ? 1u : cache) {
        t.cfg.read_only = 1;
        t.cfg.cache_nodes = cache;
        rc = t_fs_mount(&t);
        CHECK(rc == 0 || rc == CAIRN_ERR_NOSPC,
              "%s: read-only mount after a cut, %u cache slots: %d %s (0 or NOSPC)", M,
              (unsigned)cache, rc, t_errname(rc));
        if (rc != 0)
            continue;
        worked = cache;
        for (bad = 0, i = 0; i < 400; i++) {
            sprintf(path, "/dir%02d/file-%03d", i % 20, i);
            bad += !t_check_file(t.fs, path, path, (int32_t)strlen(path), M);
        }
        CHECK(bad == 0, "%s: read-only after a cut: %d of 400 files wrong", M, bad);
        RC(t_fs_unmount(&t), 0, "read-only unmount");
    }
    CHECK(worked > 0, "%s: a read-only mount after the cut worked with some cache", M);
    csim_counters(t.sim, &c);
    CHECK(c.prog_calls == 0 && c.erases == 0,
          "%s: the read-only mounts programmed %llu times, erased %llu times", M,
          (unsigned long long)c.prog_calls, (unsigned long long)c.erases);
    t.cfg.read_only = 0;
    t.cfg.cache_nodes = 0;
    t.cfg.mem = mem;
    t.cfg.mem_size = mem_size;
    RC(t_fs_mount(&t), 0, "writable mount after the read-only ones");
    for (bad = 0, i = 0; i < 400; i++) {
        sprintf(path, "/dir%02d/file-%03d", i % 20, i);
        bad += !t_check_file(t.fs, path, path, (int32_t)strlen(path), M);
    }
    CHECK(bad == 0, "%s: after recovery: %d of 400 files wrong", M, bad);
    printf("  %s readonly_replay: the read-only mount after the cut took %u cache slots\n", M,
           (unsigned)worked);
    done(&t, "readonly_replay");
}

static void s_persist(void)
{
    struct tfs t;
    char path[32];
    uint8_t *d[6];
    int32_t sz[6] = {1, 100, 0, 0, 0, 0};
    int i;
    fresh(&t);
    sz[2] = PG;
    sz[3] = PG + 1;
    sz[4] = 5 * PG - 1;
    sz[5] = 40000;
    RC(cairn_mkdir(t.fs, "/p"), 0, "mkdir");
    for (i = 0; i < 6; i++) {
        d[i] = pat(sz[i], 60 + (uint64_t)i);
        snprintf(path, sizeof path, "/p/f%d", i);
        RC(t_write_file(t.fs, path, d[i], sz[i]), 0, "write");
    }
    for (i = 0; i < 3; i++) {
        int k;
        remount(&t, "persist");
        for (k = 0; k < 6; k++) {
            snprintf(path, sizeof path, "/p/f%d", k);
            t_check_file(t.fs, path, d[k], sz[k], M);
        }
    }
    for (i = 0; i < 6; i++)
        free(d[i]);
    done(&t, "persist");
}

static void s_fs_stat(void)
{
    struct tfs t;
    struct cairn_fsinfo a, b, c;
    const struct cairn_geometry *g;
    int32_t len;
    uint8_t *data;
    uint32_t bpl;
    fresh(&t);
    g = csim_geometry(t.sim);
    bpl = g->blocks_per_lblock ? g->blocks_per_lblock : 1;
    RC(cairn_fs_stat(t.fs, &a), 0, "fs_stat");
    CHECK(a.total_bytes > 0 && a.free_bytes <= a.total_bytes &&
              a.used_bytes <= a.total_bytes,
          "%s: fs_stat total %llu free %llu used %llu", M, (unsigned long long)a.total_bytes,
          (unsigned long long)a.free_bytes, (unsigned long long)a.used_bytes);
    CHECK(a.total_bytes <= (uint64_t)g->page_size * g->pages_per_block * g->block_count,
          "%s: total %llu not above the device size", M, (unsigned long long)a.total_bytes);
    RC(a.page_size, g->page_size, "fs_stat page_size");
    RC(a.block_size, g->page_size * g->pages_per_block * bpl, "fs_stat block_size");
    RC(a.name_max, CAIRN_NAME_MAX, "fs_stat name_max");
    len = (int32_t)(a.total_bytes / 8);
    data = pat(len, 70);
    RC(t_write_file(t.fs, "/big", data, len), 0, "write 1/8 of the volume");
    RC(cairn_fs_stat(t.fs, &b), 0, "fs_stat");
    CHECK(b.free_bytes + (uint64_t)len / 2 <= a.free_bytes,
          "%s: free decreases when writing %ld bytes: %llu -> %llu", M, (long)len,
          (unsigned long long)a.free_bytes, (unsigned long long)b.free_bytes);
    CHECK(b.used_bytes >= a.used_bytes + (uint64_t)len / 2, "%s: used grows: %llu -> %llu",
          M, (unsigned long long)a.used_bytes, (unsigned long long)b.used_bytes);
    RC(cairn_remove(t.fs, "/big"), 0, "remove");
    RC(cairn_sync(t.fs), 0, "sync");
    RC(cairn_fs_stat(t.fs, &c), 0, "fs_stat");
    CHECK(c.free_bytes >= b.free_bytes + (uint64_t)len / 2,
          "%s: free grows after remove + sync: %llu -> %llu", M,
          (unsigned long long)b.free_bytes, (unsigned long long)c.free_bytes);
    printf("  %s fs_stat: total %llu, free %llu -> %llu (wrote %ld) -> %llu (removed)\n", M,
           (unsigned long long)a.total_bytes, (unsigned long long)a.free_bytes,
           (unsigned long long)b.free_bytes, (long)len, (unsigned long long)c.free_bytes);
    free(data);
    done(&t, "fs-stat");
}

static void s_nospc(void)
{
    struct tfs t;
    cairn *fs;
    struct cairn_fsinfo a, b;
    const int32_t chunk = 4096;
    uint8_t *buf = (uint8_t *)malloc((size_t)chunk), *keep = pat(1000, 80);
    int64_t written = 0, limit;
    int32_t r = 0;
    int fd, rc, i, nfiles = 0;
    char path[32];
    fresh(&t);
    fs = t.fs;
    RC(t_write_file(fs, "/keep", keep, 1000), 0, "write /keep");
    RC(cairn_fs_stat(fs, &a), 0, "fs_stat");
    limit = (int64_t)a.total_bytes * 2 + 10 * chunk;
    fd = cairn_open(fs, "/fill", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    CHECK(fd >= 0, "%s: open /fill", M);
    while (written < limit) {
        t_pattern(buf, (size_t)chunk, (uint64_t)(written / chunk) + 1000);
        r = cairn_write(fs, fd, buf, chunk);
        if (r != chunk)
            break;
        written += chunk;
    }
    if (r > 0 && r < chunk) { /* a short write, then NOSPC */
        written += r;
        r = cairn_write(fs, fd, buf, chunk);
    }
    RC(r, CAIRN_ERR_NOSPC, "writing until the volume is full");
    printf("  %s nospc: %lld bytes written of %llu total before NOSPC\n", M,
           (long long)written, (unsigned long long)a.total_bytes);
    rc = cairn_file_sync(fs, fd);
    CHECK(rc == 0 || rc == CAIRN_ERR_NOSPC, "%s: file_sync on a full volume: %d %s", M, rc,
          t_errname(rc));
    rc = cairn_close(fs, fd);
    CHECK(rc == 0 || rc == CAIRN_ERR_NOSPC, "%s: close on a full volume: %d %s", M, rc,
          t_errname(rc));
    rc = t_fs_check(&t, "nospc full");
    CHECK(rc == 0, "%s: cairn_check on the full volume: %d", M, rc);
    t_check_file(fs, "/keep", keep, 1000, M);
    {
        uint8_t *got;
        int32_t n, k, ok = 1;
        rc = t_read_file(fs, "/fill", &got, &n);
        RC(rc, 0, "read /fill");
        if (rc == 0) {
            CHECK(n <= written + chunk && n >= written - 2 * PG - chunk,
                  "%s: /fill size %ld after writing %lld", M, (long)n, (long long)written);
            for (k = 0; k + chunk <= n && ok; k += chunk) {
                t_pattern(buf, (size_t)chunk, (uint64_t)(k / chunk) + 1000);
                ok = memcmp(got + k, buf, (size_t)chunk) == 0;
            }
            CHECK(ok, "%s: /fill content intact up to %ld", M, (long)k);
            free(got);
        }
    }
    rc = cairn_mkdir(fs, "/newdir");
    CHECK(rc == 0 || rc == CAIRN_ERR_NOSPC, "%s: mkdir on a full volume: %d %s", M, rc,
          t_errname(rc));
    RC(cairn_remove(fs, "/fill"), 0, "remove on a full volume");
    RC(cairn_sync(fs), 0, "sync after remove");
    RC(cairn_fs_stat(fs, &b), 0, "fs_stat");
    CHECK(b.free_bytes >= (uint64_t)written / 2, "%s: free after remove: %llu", M,
          (unsigned long long)b.free_bytes);
    {
        int32_t n = (int32_t)(a.total_bytes / 4);
        uint8_t *d = pat(n, 81);
        RC(t_write_file(fs, "/again", d, n), 0, "write 1/4 of the volume after remove");
        remount(&t, "nospc");
        fs = t.fs;
        t_check_file(fs, "/again", d, n, M);
        t_check_file(fs, "/keep", keep, 1000, M);
        RC(cairn_remove(fs, "/again"), 0, "remove");
        free(d);
    }
    /* many small files until NOSPC, then remove them all */
    RC(cairn_mkdir(fs, "/s"), 0, "mkdir");
    for (i = 0; i < 100000; i++) {
        snprintf(path, sizeof path, "/s/%05d", i);
        t_pattern(buf, 1024, (uint64_t)i);
        rc = t_write_file(fs, path, buf, 1024);
        if (rc != 0)
            break;
        nfiles++;
    }
    RC(rc, CAIRN_ERR_NOSPC, "small files until full");
    printf("  %s nospc: %d files of 1 KiB before NOSPC\n", M, nfiles);
    rc = t_fs_check(&t, "nospc small");
    CHECK(rc == 0, "%s: cairn_check with small files full: %d", M, rc);
    remount(&t, "nospc");
    fs = t.fs;
    for (rc = 0, i = 0; i <= nfiles && i < 100000; i++) {
        int e;
        snprintf(path, sizeof path, "/s/%05d", i);
        e = cairn_remove(fs, path);
        if (e != 0 && !(i == nfiles && e == CAIRN_ERR_NOENT)) {
            if (!rc)
                printf("  %s: remove %s: %s\n", M, path, t_errname(e));
            rc++;
        }
    }
    CHECK(rc == 0, "%s: removing all small files on a full volume: %d failed", M, rc);
    RC(cairn_remove(fs, "/s"), 0, "remove dir");
    t_check_file(fs, "/keep", keep, 1000, M);
    remount(&t, "nospc");
    free(buf);
    free(keep);
    done(&t, "nospc");
}

static void s_check(void)
{
    struct tfs t;
    struct cairn_check_report rep;
    int rc;
    fresh(&t);
    memset(&rep, 0, sizeof rep);
    RC(cairn_check(t.fs, &rep, NULL, NULL), 0, "check on an empty volume");
    RC(rep.errors, 0, "errors");
    RC(cairn_mkdir(t.fs, "/a"), 0, "mkdir");
    RC(cairn_mkdir(t.fs, "/a/b"), 0, "mkdir");
    RC(t_write_file(t.fs, "/a/f", "123", 3), 0, "create");
    RC(t_write_file(t.fs, "/g", "456", 3), 0, "create");
    memset(&rep, 0, sizeof rep);
    rc = cairn_check(t.fs, &rep, NULL, NULL);
    RC(rc, 0, "check");
    CHECK(rep.errors == 0 && rep.files == 2 && rep.dirs >= 2 && rep.dirs <= 3,
          "%s: check report: errors %u files %u dirs %u", M, (unsigned)rep.errors,
          (unsigned)rep.files, (unsigned)rep.dirs);
    done(&t, "check");
}

static void s_io(void)
{
    struct tfs t;
    struct csim_counters c;
    uint8_t *data = pat(4 * PG, 90);
    int fd, rc;
    /* own memory: the mount is abandoned after the cut */
    t_fs_init(&t, t_sim_new(MED, 7), 1);
    t_fs_format_mount(&t);
    fd = cairn_open(t.fs, "/io", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    RC(cairn_write(t.fs, fd, data, 4 * PG), 4 * PG, "write");
    csim_counters(t.sim, &c);
    csim_cut_at(t.sim, c.mutating_ops, CSIM_TEAR_NONE);
    rc = cairn_file_sync(t.fs, fd);
    RC(rc, CAIRN_ERR_IO, "file_sync with the power off");
    rc = cairn_write(t.fs, fd, data, 4 * PG);
    CHECK(rc == CAIRN_ERR_IO || rc == 4 * PG, "%s: write with the power off: %d", M, rc);
    rc = cairn_unmount(t.fs);
    CHECK(rc == 0 || t_is_err(rc), "%s: unmount with the power off: %d", M, rc);
    t_fs_abandon(&t);
    csim_power_on(t.sim);
    RC(t_fs_mount(&t), 0, "mount after the power came back");
    free(data);
    done(&t, "io");
}

static void s_fbig(void)
{
    struct tfs t;
    int fd, rc;
    fresh(&t);
    fd = cairn_open(t.fs, "/fbig", CAIRN_O_RDWR | CAIRN_O_CREAT);
    RC(cairn_seek(t.fs, fd, INT32_MAX - 4, CAIRN_SEEK_SET), INT32_MAX - 4,
       "seek near 2 GiB");
    RC(cairn_write(t.fs, fd, "12345678", 8), CAIRN_ERR_FBIG, "write past 2 GiB - 1");
    RC(cairn_size(t.fs, fd), 0, "size unchanged");
    rc = cairn_seek(t.fs, fd, 10, CAIRN_SEEK_CUR);
    CHECK(t_is_err(rc), "%s: seek beyond INT32_MAX fails: %d", M, rc);
    RC(cairn_close(t.fs, fd), 0, "close");
    done(&t, "fbig");
}

static void s_config(void)
{
    struct tfs t;
    struct cairn_config cfg;
    struct csim_counters c;
    uint32_t need;
    cairn *fs;
    int rc;
    fresh(&t);
    fs = t.fs;
    CHECK(cairn_context_size() > 0 && cairn_context_size() <= CAIRN_CONTEXT_SIZE,
          "%s: context size %lu <= CAIRN_CONTEXT_SIZE", M, (unsigned long)cairn_context_size());
    need = cairn_mem_size(&t.cfg);
    CHECK(need > 0, "%s: mem_size of the default config", M);
    printf("  %s: context %lu bytes, memory %lu bytes (default config)\n", M,
           (unsigned long)cairn_context_size(), (unsigned long)need);
    cfg = t.cfg;
    cfg.cache_nodes = 5;
    RC(cairn_mem_size(&cfg), 0, "mem_size with cache_nodes 5");
    {
        cairn *scratch = (cairn *)malloc(cairn_context_size());
        RC(cairn_format(scratch, &cfg), CAIRN_ERR_INVAL, "format with cache_nodes 5");
        free(scratch);
    }
    cfg = t.cfg;
    cfg.node_size = (uint32_t)PG + 1;
    RC(cairn_mem_size(&cfg), 0, "mem_size with node_size not a page multiple");
    cfg = t.cfg;
    cfg.dev = NULL;
    {
        cairn *scratch = (cairn *)malloc(cairn_context_size());
        RC(cairn_format(scratch, &cfg), CAIRN_ERR_INVAL, "format without a device");
        RC(cairn_format(NULL, &t.cfg), CAIRN_ERR_INVAL, "format without a context");
        free(scratch);
    }
    RC(t_write_file(fs, "/ro", "read-only", 9), 0, "write");
    RC(t_fs_unmount(&t), 0, "unmount");
    cfg = t.cfg;
    cfg.cache_nodes = 5;
    RC(cairn_mount(fs, &cfg), CAIRN_ERR_INVAL, "mount with cache_nodes 5");
    cfg = t.cfg;
    cfg.mem = malloc(need);
    cfg.mem_size = need - 8;
    RC(cairn_mount(fs, &cfg), CAIRN_ERR_INVAL, "mount with too little memory");
    cfg.mem_size = need;
    RC(cairn_mount(fs, &cfg), 0, "mount with caller memory");
    t_check_file(fs, "/ro", "read-only", 9, M);
    RC(cairn_unmount(fs), 0, "unmount");
    free(cfg.mem);

    /* read-only mount */
    csim_reset_counters(t.sim);
    t.cfg.read_only = 1;
    RC(t_fs_mount(&t), 0, "read-only mount");
    t_check_file(fs, "/ro", "read-only", 9, M);
    RC(cairn_open(fs, "/ro", CAIRN_O_WRONLY), CAIRN_ERR_ROFS, "open WRONLY read-only");
    RC(cairn_open(fs, "/new", CAIRN_O_RDWR | CAIRN_O_CREAT), CAIRN_ERR_ROFS,
       "create read-only");
    RC(cairn_mkdir(fs, "/d"), CAIRN_ERR_ROFS, "mkdir read-only");
    RC(cairn_remove(fs, "/ro"), CAIRN_ERR_ROFS, "remove read-only");
    RC(cairn_rename(fs, "/ro", "/r2"), CAIRN_ERR_ROFS, "rename read-only");
    RC(cairn_setattr(fs, "/ro", 1, "a", 1), CAIRN_ERR_ROFS, "setattr read-only");
    RC(cairn_removeattr(fs, "/ro", 1), CAIRN_ERR_ROFS, "removeattr read-only");
    RC(cairn_sync(fs), 0, "sync read-only");
    rc = t_fs_check(&t, "read-only");
    RC(rc, 0, "check read-only");
    RC(t_fs_unmount(&t), 0, "unmount read-only");
    csim_counters(t.sim, &c);
    CHECK(c.prog_calls == 0 && c.erases == 0,
          "%s: a read-only mount programmed %llu times, erased %llu times", M,
          (unsigned long long)c.prog_calls, (unsigned long long)c.erases);
    t.cfg.read_only = 0;
    RC(t_fs_mount(&t), 0, "mount");
    t_check_file(fs, "/ro", "read-only", 9, M);
    t_fs_free(&t);

    /* an unformatted device */
    t_fs_init(&t, t_sim_new(MED, 8), 0);
    rc = t_fs_mount(&t);
    CHECK(rc < 0 && t_is_err(rc), "%s: mount of a blank device fails: %d", M, rc);
    printf("  %s: mount of a blank device returns %s\n", M, t_errname(rc));
    t_fs_abandon(&t);
    /* random garbage */
    {
        const struct cairn_geometry *g = csim_geometry(t.sim);
        uint32_t p, np = g->pages_per_block * g->block_count;
        uint8_t *page = (uint8_t *)malloc(g->page_size), *spare = NULL;
        uint64_t s = 5;
        if (g->spare_size)
            spare = (uint8_t *)malloc(g->spare_size);
        for (p = 0; p < np; p += 1 + t_randn(&s, 3)) {
            t_pattern(page, g->page_size, t_rand(&s));
            if (spare)
                t_pattern(spare, g->spare_size, t_rand(&s));
            csim_poke(t.sim, p, page, spare);
        }
        rc = t_fs_mount(&t);
        CHECK(rc < 0 && t_is_err(rc), "%s: mount of random data fails: %d", M, rc);
        t_fs_abandon(&t);
        free(page);
        free(spare);
    }
    t_fs_free(&t);
    printf("  %s config: done\n", M);
}

/* Zero config works everywhere (issue 11): an all-zero cairn_config and the
 * simulator's geometry with blocks_per_lblock 0 (cairn picks the segment
 * size) format, mount, store a file and mount again on every model at full
 * size and on 1 MiB and 4 MiB slices of the NOR models. */
static void s_zero_config(void)
{
    static const struct { const char *model; uint32_t blocks; } vols[] = {
        {"nor-m25p16", 0},   {"nor-m25p16", 16},    {"nor-w25q128", 0},
        {"nor-w25q128", 256}, {"nor-w25q128", 1024}, {"nand-dhara", 0},
        {"nand-jffs2", 0},   {"sd-tf", 0}};
    size_t v;
    for (v = 0; v < sizeof vols / sizeof vols[0]; v++) {
        struct tfs t;
        struct cairn_fsinfo fi;
        char what[64];
        uint32_t need;
        int rc;
        snprintf(what, sizeof what, "%s, %u blocks", vols[v].model, (unsigned)vols[v].blocks);
        t_fs_init(&t, t_sim_model(vols[v].model, vols[v].blocks, 0, 1), 0);
        CHECK(csim_geometry(t.sim)->blocks_per_lblock == 0, "%s: the model leaves the segment "
              "size to cairn", what);
        need = cairn_mem_size(&t.cfg);
        rc = cairn_format(t.fs, &t.cfg);
        if (rc == 0)
            rc = t_fs_mount(&t);
        CHECK(need > 0 && rc == 0, "%s: zero config: mem_size %u, format + mount %d", what,
              (unsigned)need, rc);
        if (rc == 0) {
            RC(t_write_file(t.fs, "/zero", "zero config", 11), 0, "write with zero config");
            RC(cairn_fs_stat(t.fs, &fi), 0, "fs_stat");
            printf("  zero config, %s: segments of %u KiB, %u bytes of RAM, %llu of %llu "
                   "bytes free\n", what, (unsigned)(fi.block_size >> 10), (unsigned)need,
                   (unsigned long long)fi.free_bytes, (unsigned long long)fi.total_bytes);
            if (t_fs_remount(&t, what) == 0)
                t_check_file(t.fs, "/zero", "zero config", 11, what);
        }
        t_fs_free(&t);
    }
    /* a card whose write unit (256 KiB) spans two erase blocks of 128 KiB:
     * zero config picks segments of whole units (the torture's random
     * geometries found it refused with INVAL, "write_unit must ... divide a
     * segment", a reason about the segment size the user had not chosen) */
    {
        struct cairn_geometry geo;
        struct csim_cost cost;
        struct csim_ftl ftl;
        struct tfs t;
        struct cairn_fsinfo fi;
        int rc;
        csim_model_info("sd-tf", &geo, &cost, &ftl);
        geo.pages_per_block = 256;
        geo.block_count = 64;
        geo.blocks_per_lblock = 0;
        t_fs_init(&t, csim_new_custom(&geo, &cost, &ftl, NULL), 0);
        rc = cairn_format(t.fs, &t.cfg);
        if (rc == 0)
            rc = t_fs_mount(&t);
        CHECK(rc == 0, "zero config, 128 KiB erase blocks and 256 KiB write units: format + "
              "mount %d (%s)", rc, cairn_config_why(&t.cfg) ? cairn_config_why(&t.cfg) : "");
        if (rc == 0) {
            RC(cairn_fs_stat(t.fs, &fi), 0, "fs_stat");
            CHECK(fi.block_size % 262144u == 0, "segments of %u KiB hold whole write units",
                  (unsigned)(fi.block_size >> 10));
            RC(t_write_file(t.fs, "/zero", "zero config", 11), 0, "write with zero config");
            if (t_fs_remount(&t, "unit of two blocks") == 0)
                t_check_file(t.fs, "/zero", "zero config", 11, "unit of two blocks");
        }
        t_fs_free(&t);
    }
}

/* Bytes free after format, as a fraction of the raw bytes (fs_stat), and
 * the segment size in erase blocks. */
static double zero_free(struct tfs *t, uint32_t *bpl)
{
    const struct cairn_geometry *g = csim_geometry(t->sim);
    uint64_t raw = (uint64_t)g->block_count * g->pages_per_block * g->page_size;
    struct cairn_fsinfo fi;
    memset(&fi, 0, sizeof fi);
    RC(cairn_fs_stat(t->fs, &fi), 0, "fs_stat");
    *bpl = fi.block_size / (g->pages_per_block * g->page_size);
    return (double)fi.free_bytes / (double)raw;
}

/* A session of the volume in t (mounted): writes `name` (synced), then
 * another file, cut `cut` mutating operations in (0: not cut; the second
 * file is then lost or whole), and mounts again with t's config. */
static void zero_session(struct tfs *t, const char *name, uint32_t cut, const char *what)
{
    struct csim_counters c;
    static const char more[] = "written by a session that may be cut";
    int rc;
    RC(t_write_file(t->fs, name, name, (int32_t)strlen(name)), 0, "write a file");
    if (cut) {
        csim_counters(t->sim, &c);
        csim_cut_at(t->sim, c.mutating_ops + cut, CSIM_TEAR_PREFIX);
        (void)t_write_file(t->fs, "/more", more, (int32_t)sizeof more);
        (void)t_write_file(t->fs, "/more2", more, (int32_t)sizeof more);
        csim_cut_cancel(t->sim);
        t_fs_abandon(t);
        csim_power_on(t->sim);
        rc = t_fs_mount(t);
        CHECK(rc == 0, "%s: mount after a cut %u operations into a session: %d", what,
              (unsigned)cut, rc);
        if (rc == 0)
            CHECK(t_fs_check(t, what) == 0, "%s: cairn_check after the cut", what);
    } else {
        t_fs_remount(t, what);
    }
    if (t->mounted)
        t_check_file(t->fs, name, name, (int32_t)strlen(name), what);
}

/* A zero-config format over a volume of the rule before, cut at each of its
 * operations in turn (from the same image each time). A mount after it finds
 * the new volume, nothing (CAIRN_ERR_CORRUPT), or, while the format had not
 * yet cleared the anchors of the old layout (clear_dividing_anchors), the
 * earlier volume whole: every file as written and a clean check, as a cut
 * format leaves it. out[0..3]: cuts, new volume, nothing, earlier volume. */
static void zero_cut_formats(const char *model, uint32_t blocks, const struct t_image *im,
                             uint32_t out[4], const char *what)
{
    uint32_t k, i;
    memset(out, 0, 4 * sizeof out[0]);
    for (k = 0; k < 400; k++) {
        struct tfs t;
        int rc, done;
        uint8_t *buf = NULL;
        int32_t len = 0;
        t_fs_init(&t, t_sim_model(model, blocks, 0, 1), 1);
        t_image_put(im, t.sim);
        csim_cut_at(t.sim, k, k % 2 ? CSIM_TEAR_RANDOM : CSIM_TEAR_PREFIX);
        rc = cairn_format(t.fs, &t.cfg);
        done = csim_powered(t.sim);
        csim_cut_cancel(t.sim);
        csim_power_on(t.sim);
        out[0] += !done;
        CHECK(!done || rc == 0, "%s: the format uncut: %d", what, rc);
        rc = t_fs_mount(&t);
        CHECK(rc == 0 || (rc == CAIRN_ERR_CORRUPT && !done), "%s: mount after a format cut at "
              "its operation %u: %d", what, (unsigned)k, rc);
        if (rc == 0 && t_read_file(t.fs, "/old0", &buf, &len) == CAIRN_ERR_NOENT) {
            out[1] += !done;
        } else if (rc == 0) {
            out[3]++;
            CHECK(!done, "%s: a whole format shows the earlier volume", what);
            for (i = 0; i < 4; i++) {
                char name[16];
                snprintf(name, sizeof name, "/old%u", (unsigned)i);
                t_check_file(t.fs, name, name, 5, what);
            }
            CHECK(t_fs_check(&t, what) == 0, "%s: the earlier volume after a format cut at "
                  "its operation %u: cairn_check", what, (unsigned)k);
        } else {
            out[2]++;
        }
        free(buf);
        if (done && rc == 0) { /* the new volume's anchors lost: nothing, not the earlier one */
            struct cairn_fsinfo fi;
            uint32_t b, ppb = csim_geometry(t.sim)->pages_per_block;
            RC(cairn_fs_stat(t.fs, &fi), 0, "fs_stat");
            RC(t_fs_unmount(&t), 0, "unmount");
            for (b = 0; b < 2u * (fi.block_size / fi.page_size / ppb); b++)
                t.cfg.dev->erase(t.cfg.dev->ctx, b);
            rc = t_fs_mount(&t);
            CHECK(rc == CAIRN_ERR_CORRUPT, "%s: a whole format, its anchors erased: mount %d "
                  "(not the earlier volume)", what, rc);
        }
        t.allow_violations = 1; /* the cut's tears: checked by the mount alone */
        t_fs_free(&t);
        if (done)
            break;
    }
}

/* Zero config on block counts that are products of two larger primes
 * (session 34): segments that divide the volume came first before, whatever
 * they cost (361 blocks of nand-jffs2 got 16 segments of 19 blocks, 0.42 of
 * raw free after format); now the smallest segment that works, the blocks
 * past the last whole one unused. A volume formatted under the old rule (the
 * same bytes as an explicit blocks_per_lblock of its size) still mounts with
 * zero config, also after a cut, and a zero-config format over it lays the
 * volume out anew: the old files never come back. cfg.mem is
 * cairn_mem_size(zero config), which must cover both layouts. */
static void s_zero_config_odd(void)
{
    static const struct {
        const char *model;
        uint32_t blocks, bpl_before, bpl_now;
    } vols[] = {{"nand-jffs2", 361, 19, 2},
                {"nand-jffs2", 2021, 43, 3},
                {"nand-dhara", 391, 17, 2},
                {"nor-w25q128", 253, 11, 8}};
    size_t v;
    for (v = 0; v < sizeof vols / sizeof vols[0]; v++) {
        struct tfs t;
        struct cairn_dev before;
        struct cairn_config zero;
        char what[96];
        uint32_t bpl, k;
        double free_before, free_now;
        int rc;
        snprintf(what, sizeof what, "%s, %u blocks", vols[v].model, (unsigned)vols[v].blocks);
        t_fs_init(&t, t_sim_model(vols[v].model, vols[v].blocks, 0, 1), 1);
        zero = t.cfg;
        before = *t.cfg.dev;
        before.geo.blocks_per_lblock = vols[v].bpl_before;
        t.cfg.dev = &before; /* the layout zero config gave before session 34 */
        CHECK(cairn_mem_size(&zero) >= cairn_mem_size(&t.cfg), "%s: zero config's memory "
              "(%u B) covers the old layout's (%u B)", what, (unsigned)cairn_mem_size(&zero),
              (unsigned)cairn_mem_size(&t.cfg));
        rc = cairn_format(t.fs, &t.cfg);
        if (rc == 0)
            rc = t_fs_mount(&t);
        CHECK(rc == 0, "%s: format in segments of %u blocks: %d", what,
              (unsigned)vols[v].bpl_before, rc);
        if (rc != 0) {
            t_fs_free(&t);
            continue;
        }
        free_before = zero_free(&t, &bpl);
        RC(t_fs_unmount(&t), 0, "unmount");
        t.cfg = zero;
        rc = t_fs_mount(&t);
        CHECK(rc == 0, "%s: zero config mounts the volume of the rule before: %d", what, rc);
        if (rc == 0) {
            (void)zero_free(&t, &bpl);
            CHECK(bpl == vols[v].bpl_before, "%s: in its segments of %u blocks (%u)", what,
                  (unsigned)vols[v].bpl_before, (unsigned)bpl);
            for (k = 0; k < 4 && t.mounted; k++) {
                char name[16];
                snprintf(name, sizeof name, "/old%u", (unsigned)k);
                zero_session(&t, name, k % 2 ? 2u + 5u * k : 0u, what);
            }
            if (t.mounted)
                t_check_file(t.fs, "/old0", "/old0", 5, what);
        }
        if (t.mounted)
            RC(t_fs_unmount(&t), 0, "unmount");
        {
            struct t_image im;
            uint32_t n[4];
            t_image_take(&im, t.sim);
            zero_cut_formats(vols[v].model, vols[v].blocks, &im, n, what);
            t_image_free(&im);
            CHECK(n[0] > 0 && n[1] + n[2] + n[3] == n[0], "%s: format cut", what);
            printf("  zero config, %s: a format over it cut at each of its %u operations: "
                   "the new volume %u times, none %u, the earlier one whole %u\n", what,
                   (unsigned)n[0], (unsigned)n[1], (unsigned)n[2], (unsigned)n[3]);
        }
        rc = cairn_format(t.fs, &t.cfg);
        if (rc == 0)
            rc = t_fs_mount(&t);
        CHECK(rc == 0, "%s: zero-config format over it: %d", what, rc);
        if (rc == 0) {
            free_now = zero_free(&t, &bpl);
            CHECK(bpl == vols[v].bpl_now, "%s: zero config picks segments of %u blocks (%u)",
                  what, (unsigned)vols[v].bpl_now, (unsigned)bpl);
            CHECK(free_now > free_before, "%s: free after format %.3f of raw, %.3f before",
                  what, free_now, free_before);
            printf("  zero config, %s: segments of %u blocks (%u before), free after format "
                   "%.3f of raw (%.3f before)\n",
                   what, (unsigned)bpl, (unsigned)vols[v].bpl_before, free_now, free_before);
            for (k = 0; k < 6 && t.mounted; k++) {
                char name[16];
                uint8_t *buf = NULL;
                int32_t len = 0;
                snprintf(name, sizeof name, "/new%u", (unsigned)k);
                zero_session(&t, name, k % 2 ? 1u + 3u * k : 0u, what);
                if (!t.mounted)
                    break;
                rc = t_read_file(t.fs, "/old0", &buf, &len);
                free(buf);
                CHECK(rc == CAIRN_ERR_NOENT, "%s: the old volume's file stays gone: %d",
                      what, rc);
            }
        }
        t_fs_free(&t);
    }
}

/* A config that cannot work gets INVAL and a reason (issue 11): each check
 * of the configuration, broken on its own, names itself through
 * cairn_config_why; cairn_mem_size is 0 exactly then (mem aside), and format
 * refuses it without touching the device. */
static void s_config_why(void)
{
    static const struct {
        const char *what, *model, *expect;
        uint32_t blocks, bpl;
        int field; /* which field is broken: see set() below */
        uint32_t value;
    } cases[] = {
        {"page of 100 B", "nor-m25p16", "page_size", 0, 0, 1, 100},
        {"no blocks", "nor-m25p16", "block_count", 0, 0, 2, 0},
        {"7 blocks, 2 a segment", "nor-m25p16", "multiple of blocks_per_lblock", 7, 2, 0, 0},
        {"segment of 65,536 pages", "nor-w25q128", "65535 pages", 0, 4096, 0, 0},
        {"unknown medium", "nor-m25p16", "medium", 0, 0, 3, 9},
        {"node of 1,000 B", "nor-m25p16", "node_size", 0, 0, 4, 1000},
        {"16 KiB nodes in 64 KiB segments", "nor-m25p16", "16 nodes", 0, 0, 4, 16384},
        {"cache of 5 nodes", "nor-m25p16", "cache_nodes", 0, 0, 5, 5},
        {"33 open files", "nor-m25p16", "max_open", 0, 0, 6, 33},
        {"9 data heads", "nor-m25p16", "data_heads", 0, 0, 7, 9},
        {"10 segments", "nor-m25p16", "at least 11 segments", 10, 1, 0, 0},
        {"10 blocks, picked", "nor-m25p16", "at least 11 erase blocks", 10, 0, 0, 0},
        {"6 cards' units, picked", "sd-tf", "at least 11 erase blocks", 6, 0, 0, 0},
        {"16 MiB in 16 KiB segments", "nor-w25q128", "16 checkpoints", 0, 4, 0, 0},
        {"no erase function", "nor-m25p16", "device", 0, 0, 8, 0},
        {"mem too small", "nor-m25p16", "mem_size", 0, 0, 9, 64},
        {"mem misaligned", "nor-m25p16", "aligned", 0, 0, 10, 0},
        {"default", "nor-m25p16", NULL, 0, 0, 0, 0},
        {"default, 1 MiB", "nor-m25p16", NULL, 16, 0, 0, 0},
        {"default NAND", "nand-jffs2", NULL, 0, 0, 0, 0},
        {"default SD", "sd-tf", NULL, 0, 0, 0, 0}};
    static uint64_t mem[4096];
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        csim *sim = t_sim_model(cases[i].model, cases[i].blocks, 0, 1);
        struct cairn_dev dev = *csim_dev(sim);
        struct cairn_config cfg;
        struct csim_counters before, after;
        cairn *fs = (cairn *)malloc(cairn_context_size());
        const char *why;
        uint32_t need;
        int rc;
        memset(&cfg, 0, sizeof cfg);
        cfg.dev = &dev;
        dev.geo.blocks_per_lblock = cases[i].bpl; /* the simulator refuses some */
        switch (cases[i].field) {
        case 1: dev.geo.page_size = cases[i].value; break;
        case 2: dev.geo.block_count = cases[i].value; break;
        case 3: dev.geo.medium = (uint8_t)cases[i].value; break;
        case 4: cfg.node_size = cases[i].value; break;
        case 5: cfg.cache_nodes = cases[i].value; break;
        case 6: cfg.max_open = cases[i].value; break;
        case 7: cfg.data_heads = (uint8_t)cases[i].value; break;
        case 8: dev.erase = NULL; break;
        case 9: cfg.mem = mem; cfg.mem_size = cases[i].value; break;
        case 10: cfg.mem = (uint8_t *)mem + 4; cfg.mem_size = (uint32_t)sizeof mem - 8; break;
        default: break;
        }
        why = cairn_config_why(&cfg);
        need = cairn_mem_size(&cfg);
        csim_counters(sim, &before);
        rc = cairn_format(fs, &cfg);
        csim_counters(sim, &after);
        if (cases[i].expect == NULL) {
            CHECK(why == NULL && need > 0 && rc == 0, "config why, %s: works (why %s, mem %u, "
                  "format %d)", cases[i].what, why ? why : "NULL", (unsigned)need, rc);
        } else {
            CHECK(why != NULL && strstr(why, cases[i].expect) != NULL,
                  "config why, %s: names \"%s\" (got \"%s\")", cases[i].what, cases[i].expect,
                  why ? why : "NULL");
            CHECK((need == 0) == (cases[i].field < 9), "config why, %s: mem_size %u is 0 "
                  "exactly when the config is bad", cases[i].what, (unsigned)need);
            CHECK(rc == CAIRN_ERR_INVAL && after.prog_calls == before.prog_calls &&
                  after.erases == before.erases, "config why, %s: format INVAL (%d), the "
                  "device untouched", cases[i].what, rc);
            if (why)
                printf("  config why, %s: %s\n", cases[i].what, why);
        }
        free(fs);
        csim_free(sim);
    }
    CHECK(cairn_config_why(NULL) != NULL, "config why of NULL names the missing device");
    printf("  config why: %u configs checked\n", (unsigned)(sizeof cases / sizeof cases[0]));
}

static void s_errstr(void)
{
    static const char *const names[] = {
        "CAIRN_OK", "CAIRN_ERR_IO", "CAIRN_ERR_CORRUPT", "CAIRN_ERR_NOENT",
        "CAIRN_ERR_EXIST", "CAIRN_ERR_NOTDIR", "CAIRN_ERR_ISDIR", "CAIRN_ERR_NOTEMPTY",
        "CAIRN_ERR_NAMETOOLONG", "CAIRN_ERR_BADF", "CAIRN_ERR_NOSPC", "CAIRN_ERR_INVAL",
        "CAIRN_ERR_ROFS", "CAIRN_ERR_MFILE", "CAIRN_ERR_NOATTR", "CAIRN_ERR_FBIG"};
    int e;
    for (e = 0; e >= CAIRN_ERR_FBIG; e--) {
        const char *n = cairn_errname(e), *s = cairn_strerror(e);
        CHECK(n != NULL && s != NULL && s[0] != 0, "errname/strerror(%d) non-NULL", e);
        if (n && e != 0)
            CHECK(strcmp(n, names[-e]) == 0, "errname(%d) = %s, expected %s", e, n,
                  names[-e]);
    }
    CHECK(cairn_errname(-99) != NULL && cairn_strerror(-99) != NULL,
          "errname/strerror of an unknown code are non-NULL");
    printf("  errname/strerror: done\n");
}

static void run_medium(int med)
{
    csim *probe = t_sim_new(med, 1);
    MED = med;
    M = t_medium_name[med];
    PG = (int32_t)csim_geometry(probe)->page_size;
    csim_free(probe);
    printf("%s (page %ld):\n", M, (long)PG);
    s_open_flags();
    s_rw_seek();
    s_truncate();
    s_badf();
    s_stat_id();
    s_remove();
    s_rename();
    s_mkdir_paths();
    s_names();
    s_deep();
    s_many();
    s_dirs();
    s_mfile();
    s_attrs();
    s_two_handles();
    s_persist();
    s_readonly_replay();
    s_fs_stat();
    s_check();
    s_io();
    s_fbig();
    s_config();
    s_nospc();
}

int main(int argc, char **argv)
{
    int i, med, any = 0;
    t_begin("test_api");
    s_errstr();
    if (argc < 2) {
        s_zero_config();
        s_zero_config_odd();
        s_config_why();
    }
    for (med = 0; med < T_NMEDIA; med++) {
        int want = argc < 2;
        for (i = 1; i < argc; i++)
            want |= strcmp(argv[i], t_medium_name[med]) == 0;
        if (want) {
            run_medium(med);
            any = 1;
        }
    }
    if (!any)
        printf("usage: test_api [nor|nand|block ...]\n");
    return t_summary("test_api");
}
