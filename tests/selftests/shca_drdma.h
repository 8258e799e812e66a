/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the sources of shca_drdma_test share: its two devices, RC pairs
 * between them, device-memory ranges with an MR and their mapping
 * (shca_drdma_test.c), and the benchmark mode (shca_drdma_bench.c).
 */
#ifndef SHCA_DRDMA_TEST_H
#define SHCA_DRDMA_TEST_H

#include <stdint.h>

#include "shca_test.h"

#define WAIT_MS		SCALED_MS(10000)

/* [0]: the DM side, [1]: the peer */
extern struct test_dev d[2];

struct rc {
	struct ibv_qp *qp[2];
	struct ibv_cq *cq[2];
};

struct dmr {
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	uint8_t *map;
};

/*
 * An RC pair, path MTU @mtu: qp[0] on d[0], qp[1] on d[1]; 0 or -1
 * (reason recorded)
 */
int rc_open(struct rc *c, enum ibv_mtu mtu);
void rc_close(struct rc *c);
/* @len bytes of device memory on d[0], a DM MR over them, mapped */
int dmr_open(struct dmr *m, size_t len);
void dmr_close(struct dmr *m);

/* the --bench mode; @peer (1 MiB at least) in @pmr on d[1] */
int drdma_bench(uint8_t *peer, struct ibv_mr *pmr);

#endif /* SHCA_DRDMA_TEST_H */
