/*
 * Times for `cairn mount`. cairn keeps none (cairn.h), but programs on the
 * mount compare them to see what changed: git took a file rewritten at the
 * same size for unchanged (its index keeps size, mtime, ctime and inode, and
 * every time read 0) and committed its old content (tests/tool/
 * real_programs.py RP_SEED=26, session 42). So the mount keeps, in memory and
 * for its own session, a modification and a change time per object it
 * changed; every other object shows the time the mount began. A remount
 * moves every time forward, which makes such programs look again, never
 * miss a change.
 */
#ifndef FUSE_TIMES_H
#define FUSE_TIMES_H

#include <stdint.h>
#include <time.h>

/* The mount began now (the time of every object not changed since). */
void ft_begin(void);
/* Object `id`'s data or entries changed: both its times become now. */
void ft_changed(uint32_t id);
/* utimens: its modification time becomes *t, its change time now. */
void ft_set_mtime(uint32_t id, const struct timespec *t);
void ft_get(uint32_t id, struct timespec *mtime, struct timespec *ctime);
void ft_end(void);

#endif
