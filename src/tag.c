/* Data pages: file bytes programmed at a head, and on NAND the tag in each
 * page's spare area that names the page (file, file page, the journal's seq)
 * so that a page written but not yet journaled can be told from garbage
 * (docs/FORMAT.md "NAND spare tags"). Shared by the file writer, GC's moves
 * and the journal's data pages; it sits just above the device layer. */
#include "cn.h"

void cn_make_tag(uint8_t *tag, uint8_t kind, uint32_t id, uint32_t fpage, uint32_t seq,
                 int32_t size, const uint8_t *data, uint32_t page_size)
{
    cn_put16(tag + CN_TAG_O_MAGIC, CN_TAG_MAGIC);
    tag[CN_TAG_O_VERSION] = CN_TAG_VERSION;
    tag[CN_TAG_O_KIND] = kind;
    cn_put32(tag + CN_TAG_O_ID, id);
    cn_put32(tag + CN_TAG_O_FPAGE, fpage);
    cn_put32(tag + CN_TAG_O_SEQ, seq);
    cn_put32(tag + CN_TAG_O_SIZE, (uint32_t)size);
    cn_put32(tag + CN_TAG_O_DATA_CRC, cn_crc32(0, data, page_size));
    cn_put32(tag + CN_TAG_O_CRC, cn_crc32(0, tag, CN_TAG_O_CRC));
}

int cn_tag_ok(const uint8_t *tag)
{
    return cn_get16(tag + CN_TAG_O_MAGIC) == CN_TAG_MAGIC &&
           tag[CN_TAG_O_VERSION] == CN_TAG_VERSION &&
           cn_crc_ok(cn_get32(tag + CN_TAG_O_CRC), cn_crc32(0, tag, CN_TAG_O_CRC));
}

/* Program pages of file data at `phys`: one device call for the run where
 * the medium takes it, page by page with a tag where pages carry one. */
int cn_write_data(cairn *fs, uint32_t phys, uint32_t id, uint32_t fpage, const uint8_t *data,
                  uint32_t pages)
{
    uint32_t i;
    if (!fs->spare_tags)
        return cn_dev_prog(fs, phys, 0, data, pages * fs->page_size, NULL, 0);
    for (i = 0; i < pages; i++) {
        uint8_t tag[CN_TAG_LEN];
        const uint8_t *d = data + (size_t)i * fs->page_size;
        int err;
        cn_make_tag(tag, CN_TAG_DATA, id, fpage + i, fs->log.seq, 0, d, fs->page_size);
        err = cn_dev_prog(fs, phys + i, 0, d, fs->page_size, tag, CN_TAG_LEN);
        if (err)
            return err;
    }
    return 0;
}
