/*
 * Layout table of the public structs, compiled into libcairn_py only.
 *
 * The Python bindings declare the structs of cairn.h, cairn_device.h and
 * csim.h again for cffi (ABI mode, python/cairn/_ffi.py). At import they
 * compare every size and field offset cffi computed with this table, so a
 * header change that the declarations missed fails loudly instead of
 * corrupting memory.
 */
#include <stddef.h>
#include <stdint.h>

#include "cairn.h"
#include "csim.h"

struct cairn_py_layout {
    const char *type;  /* "struct cairn_info", ...; NULL ends the table */
    const char *field; /* NULL: the entry gives sizeof(type) in offset */
    uint32_t offset;
    uint32_t size;
};

const struct cairn_py_layout *cairn_py_layout(void);

#define S(T) {"struct " #T, NULL, (uint32_t)sizeof(struct T), (uint32_t)sizeof(struct T)}
#define F(T, f)                                                                 \
    {"struct " #T, #f, (uint32_t)offsetof(struct T, f),                         \
     (uint32_t)sizeof(((struct T *)0)->f)}

static const struct cairn_py_layout table[] = {
    S(cairn_info), F(cairn_info, type), F(cairn_info, size), F(cairn_info, id),
    F(cairn_info, name),
    S(cairn_fsinfo), F(cairn_fsinfo, total_bytes), F(cairn_fsinfo, free_bytes),
    F(cairn_fsinfo, used_bytes), F(cairn_fsinfo, block_size), F(cairn_fsinfo, page_size),
    F(cairn_fsinfo, name_max), F(cairn_fsinfo, files), F(cairn_fsinfo, erase_min),
    F(cairn_fsinfo, erase_max), F(cairn_fsinfo, erase_mean), F(cairn_fsinfo, bad_blocks),
    S(cairn_config), F(cairn_config, dev), F(cairn_config, cache_nodes),
    F(cairn_config, node_size), F(cairn_config, max_open), F(cairn_config, commit_pages),
    F(cairn_config, mem), F(cairn_config, mem_size), F(cairn_config, read_only),
    F(cairn_config, data_heads), F(cairn_config, wear_spread), F(cairn_config, gc_step_pages),
    S(cairn_bd), F(cairn_bd, fs), F(cairn_bd, fd), F(cairn_bd, sector_size),
    F(cairn_bd, sector_count),
    S(cairn_check_report), F(cairn_check_report, errors), F(cairn_check_report, files),
    F(cairn_check_report, dirs), F(cairn_check_report, extents),
    F(cairn_check_report, nodes), F(cairn_check_report, data_pages),
    S(cairn_geometry), F(cairn_geometry, page_size), F(cairn_geometry, spare_size),
    F(cairn_geometry, pages_per_block), F(cairn_geometry, block_count),
    F(cairn_geometry, medium), F(cairn_geometry, max_partial_programs),
    F(cairn_geometry, write_unit), F(cairn_geometry, blocks_per_lblock),
    S(cairn_dev), F(cairn_dev, ctx), F(cairn_dev, geo), F(cairn_dev, read),
    F(cairn_dev, read_spare), F(cairn_dev, prog), F(cairn_dev, erase), F(cairn_dev, is_bad),
    F(cairn_dev, mark_bad), F(cairn_dev, sync),
    S(csim_cost), F(csim_cost, read_setup_ns), F(csim_cost, read_bytes_per_s),
    F(csim_cost, prog_setup_ns), F(csim_cost, prog_bytes_per_s), F(csim_cost, prog_page_ns),
    F(csim_cost, erase_ns), F(csim_cost, ftl_prog_ns), F(csim_cost, ftl_erase_ns),
    S(csim_ftl), F(csim_ftl, au_bytes), F(csim_ftl, flash_page_bytes), F(csim_ftl, open_aus),
    S(csim_counters), F(csim_counters, read_calls), F(csim_counters, read_bytes),
    F(csim_counters, prog_calls), F(csim_counters, prog_bytes), F(csim_counters, prog_pages),
    F(csim_counters, erases), F(csim_counters, spare_reads), F(csim_counters, mutating_ops),
    F(csim_counters, time_ns), F(csim_counters, ftl_prog_pages),
    F(csim_counters, ftl_copy_pages), F(csim_counters, ftl_erases),
    F(csim_counters, ftl_merges), F(csim_counters, corrected),
    F(csim_counters, uncorrectable), F(csim_counters, violations),
    S(csim_options), F(csim_options, image_path), F(csim_options, create),
    F(csim_options, seed), F(csim_options, block_count), F(csim_options, blocks_per_lblock),
    {NULL, NULL, 0, 0}};

const struct cairn_py_layout *cairn_py_layout(void) { return table; }
