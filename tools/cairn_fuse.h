/*
 * `cairn mount IMAGE DIR`: a cairn volume mounted through FUSE 3 (built only
 * when libfuse3 is found: CAIRN_WITH_FUSE). docs/TOOL.md, "mount".
 */
#ifndef CAIRN_FUSE_H
#define CAIRN_FUSE_H

#include "vol.h"

/* Opens and mounts the volume vo->path, then serves it at dir until
 * `fusermount3 -u dir` or SIGTERM/SIGINT/SIGHUP, then unmounts it cleanly.
 * options: FUSE -o options (comma separated, "ro" mounts read-only), or NULL.
 * foreground: do not daemonize. Returns the exit code (0 ok, 2 error). */
int cairn_fuse_mount(struct vol_opts *vo, const char *dir, const char *options, int foreground);

#endif /* CAIRN_FUSE_H */
