/*
 * cairn dump: a volume's on-flash structures decoded per docs/FORMAT.md,
 * read through its device without mounting (images that no longer mount
 * too): the newest checkpoint, the journal records after it, the tree's
 * nodes. Everything read from flash is checked before it is used: a hostile
 * image gives "problem:" lines, never a crash or an endless loop.
 *
 * The output is line-oriented and the Python decoder (python/cairn/ondisk.py)
 * prints the same lines for the same image (tests/tool/test_tool.sh compares).
 */
#ifndef CAIRN_DUMP_H
#define CAIRN_DUMP_H

#include "cairn_device.h"
#include "probe.h"

/* The checkpoint found by ckpt_find_newest: header, heads, segment table. */
void dump_checkpoint(const struct ckpt *ck, uint32_t medium);

/* The journal from the checkpoint's position to the end of its valid chain.
 * Returns the problems found (0: the chain ends as a journal does), or -1 when
 * out of memory. */
int dump_journal(struct cairn_dev *dev, const struct ckpt *ck);

/* Every node of the tree, depth first from the root, with its entries.
 * Returns the problems found, or -1 when out of memory. */
int dump_tree(struct cairn_dev *dev, const struct ckpt *ck);

#endif /* CAIRN_DUMP_H */
