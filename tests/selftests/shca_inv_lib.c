// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_inv_test's building blocks (shca_inv.h): its devices and RC
 * connections, completions, counters and fault injection.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "shca_inv.h"

const char *const op_name[] = { "write", "read", "read_queued" };
const char *const tgt_name[] = { "mr", "mw1", "mw2" };
const char *const inv_name[] = {
	"linv_same", "linv_other", "sinv", "dealloc", "rebind_same",
	"rebind_other", "dereg", "rereg",
};

/* ------------------------------------------------------------------ */
/* devices, connections                                                 */

struct inv_globals g;

/* How SIDE's QP of C reaches the other side's */
static struct rc_path conn_path(const struct conn *c, int side)
{
	struct rc_path path = {
		.access = REMOTE_RW | IBV_ACCESS_REMOTE_ATOMIC,
		.mtu = IBV_MTU_1024,
		.dest_qpn = c->qp[!side]->qp_num,
		.rq_psn = c->psn[!side],
		.sq_psn = c->psn[side],
		.dgid = g.dev[!side].gid,
		.sgid_index = g.dev[side].gidx,
		.rd_atomic = 4,
		.min_rnr_timer = 12,
		/* 537 ms: no retransmission while a packet is held */
		.timeout = 17,
		.retry_cnt = 7,
		.rnr_retry = 7,
	};

	return path;
}

/* RESET -> RTS on both sides, with fresh PSNs. */
int conn_connect(struct conn *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	enum ibv_qp_state at = IBV_QPS_RESET;
	struct rc_path path[2];
	int s, ret = 0;

	for (s = 0; s < 2; s++)
		c->psn[s] = (uint32_t)random() & 0xffffff;
	for (s = 0; s < 2 && !ret; s++)
		ret = ibv_modify_qp(c->qp[s], &a, IBV_QP_STATE);
	if (!ret) {
		path[0] = conn_path(c, 0);
		path[1] = conn_path(c, 1);
		ret = rc_connect_pair(c->qp, path, &s, &at);
	} else {
		s--;
	}
	if (ret)
		failf("ibv_modify_qp(state %d) of QP %u on %s: %s", at,
		      c->qp[s]->qp_num, g.dev[s].name, strerror(ret));
	return ret ? -1 : 0;
}

void conn_destroy(struct conn *c)
{
	int s;

	for (s = 0; s < 2; s++)
		qp_cqs_destroy(c->qp[s], c->cq[s], NULL, g.dev[s].name);
	memset(c, 0, sizeof(*c));
}

int conn_open(struct conn *c)
{
	struct qp_spec spec = qp_spec_simple(CQ_DEPTH, 16);

	memset(c, 0, sizeof(*c));
	if (!qp_pair_create(g.dev, &spec, c->qp, c->cq) && !conn_connect(c))
		return 0;
	conn_destroy(c);
	return -1;
}

/*
 * Poll @cq for one completion for at most @ms: 1 with *@wc filled, 0 on
 * timeout (a reason recorded), -1 on a polling error.
 */
int wc_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms,
	    const char *what)
{
	int r = poll_wait(cq, wc, 1, ms);

	if (r < 0)
		failf("%s: polling failed", what);
	else if (!r)
		failf("%s: no completion within %d ms", what, ms);
	return r;
}

/* Wait for a completion of @wr_id with @status; any other fails. */
bool wc_expect(struct ibv_cq *cq, uint64_t wr_id,
	       enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc;

	if (wc_wait(cq, &wc, WAIT_MS, what) != 1)
		return false;
	if (wc.wr_id == wr_id && wc.status == status)
		return true;
	failf("%s: completion wr_id %llu status %s, expected wr_id %llu %s",
	      what, (unsigned long long)wc.wr_id,
	      ibv_wc_status_str(wc.status), (unsigned long long)wr_id,
	      ibv_wc_status_str(status));
	return false;
}

/* Throw away whatever completions a CQ holds (flushes after an error). */
void cq_drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[8];

	while (ibv_poll_cq(cq, 8, wc) > 0)
		;
}

/* ------------------------------------------------------------------ */
/* counters and fault injection                                        */

unsigned long long ctr(int dev, const char *name)
{
	unsigned long long v = 0;

	if (!ctr_read(g.dev[dev].name, name, &v))
		v = 0;
	return v;
}

