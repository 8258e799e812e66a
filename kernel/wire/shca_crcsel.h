/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca_crcsel.h - the data path's CRC-32 chosen at load by measurement
 * (shca_crcsel.c).
 */
#ifndef SHCA_CRCSEL_H
#define SHCA_CRCSEL_H

int shca_crcsel_init(void);
void shca_crcsel_exit(void);

#endif /* SHCA_CRCSEL_H */
