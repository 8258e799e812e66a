// SPDX-License-Identifier: GPL-2.0
/*
 * shca_crc.c - the data path's CRC-32 dispatch, see shca_crc.h.
 */
#include "shca_pure.h"
#include "shca_crc.h"
#include "shca_crc_table.h"

const struct shca_crc_impl shca_crc_table_impl = {
	.name = "table",
	.crc = shca_crc32_table,
	.copy = shca_crc32_copy_table,
};

static struct shca_crc_impl shca_crc_cur = {
	.name = "table",
	.crc = shca_crc32_table,
	.copy = shca_crc32_copy_table,
};

void shca_crc_use(const struct shca_crc_impl *impl)
{
	shca_crc_cur = impl ? *impl : shca_crc_table_impl;
}

const char *shca_crc_name(void)
{
	return shca_crc_cur.name;
}

u32 shca_crc32_le(u32 crc, const void *buf, size_t len)
{
	if (len < SHCA_CRC_SHORT)
		return shca_crc32_table(crc, buf, len);
	return shca_crc_cur.crc(crc, buf, len);
}

u32 shca_crc32_copy(u32 crc, void *dst, const void *src, size_t len)
{
	if (len < SHCA_CRC_SHORT)
		return shca_crc32_copy_table(crc, dst, src, len);
	return shca_crc_cur.copy(crc, dst, src, len);
}
