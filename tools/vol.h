/*
 * A cairn volume in an image file or on a block device, for the command-line
 * tool (cairn.c) and a FUSE front end: opening or creating the target, its
 * geometry (from flags when creating, from the image when opening), the
 * device (a raw image, or a simulator image file) and the mount.
 */
#ifndef CAIRN_VOL_H
#define CAIRN_VOL_H

#include <stdint.h>

#include "cairn.h"
#include "csim.h"
#include "imgdev.h"
#include "probe.h"

/* What the user asked for; 0 fields are unset. */
struct vol_opts {
    const char *path;
    uint64_t offset;    /* byte offset of the image in the file */
    const char *model;  /* a simulator model's geometry */
    uint32_t medium;    /* enum cairn_medium */
    uint32_t page;      /* page (sector) size */
    uint32_t block;     /* erase block, bytes of data */
    uint32_t lblock;    /* erase blocks per segment (logical block) */
    uint64_t size;      /* bytes of flash data (without OOB) */
    int have_spare;     /* spare is given */
    uint32_t spare;     /* NAND: OOB bytes per page in the image */
    int no_sync;        /* do not fdatasync the image (faster, not durable) */
    uint32_t max_open;  /* handles the mount allows (0: 8) */
};

struct vol {
    char err[768];
    struct vol_opts o;
    int fd;
    int block_device;
    uint64_t target_bytes;       /* size of the file or device */
    csim *sim;                   /* a simulator image file, else NULL */
    struct imgdev img;
    int img_ready;
    struct cairn_dev *dev;
    uint32_t oob;                /* NAND: OOB bytes per page in the image */
    uint32_t node_size;          /* the volume's (0 before format: the default) */
    int detected;                /* geometry read from the image */
    struct detect_result det;
    cairn *fs;
    void *mem;                   /* the mount's buffers (cfg.mem): ours to free even
                                  * when an unmount fails (NOSPC) and is given up */
    int mounted;
    int read_only;
    struct cairn_config cfg;
    /* progress of long work: called after each device call */
    void (*on_io)(void *arg);
    void *on_io_arg;
};

/* Every call returns 0 or -1 with a message in v->err. */

/* Creates the image (a new file filled with 0xFF, or the region at --offset
 * of an existing file, or a block device) with the geometry of the flags.
 * The volume is not formatted yet. */
int vol_create(struct vol *v, const struct vol_opts *o);
/* cairn_format. */
int vol_format(struct vol *v);
/* Opens an existing image; the geometry comes from the image (flags only
 * disambiguate, see docs/TOOL.md). */
int vol_open(struct vol *v, const struct vol_opts *o, int read_only);
int vol_mount(struct vol *v, int read_only);
/* Unmounts (when mounted). */
int vol_unmount(struct vol *v);
/* Unmounts when mounted and releases everything; returns the unmount's
 * result. */
int vol_close(struct vol *v);

/* Bytes read and written through the device so far (0 for simulator images). */
uint64_t vol_bytes_read(const struct vol *v);
uint64_t vol_bytes_written(const struct vol *v);

/* "nor", "nand", "block". */
const char *vol_medium_name(uint32_t medium);
/* Parses "nor", "nand", "block" (also "sd", "emmc"); 0 if unknown. */
uint32_t vol_medium_parse(const char *s);

#endif /* CAIRN_VOL_H */
