// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mtu_test: the path MTU of RTS RC QPs changes while messages are in
 * flight, and packets lost before the change are retransmitted after it.
 * The transmit history must rebuild them as they were first cut (with the
 * old MTU), while messages started after the change use the new one.
 *
 *   shca_mtu_test DEV1 GIDX1 DEV2 GIDX2 NS1:IF1 NS2:IF2
 *
 * Side A (DEV1) sends to side B (DEV2).  IF1 is the interface (in netns
 * NS1) A's packets leave by, IF2 the one B's leave by; both must carry a
 * root netem qdisc, whose loss this program changes (route netlink) to
 * drop packets: all of A's while the first messages go out (so that every
 * one of them is retransmitted after the MTU change), then a few percent
 * both ways.  Every byte that lands is checked (with guard bytes around
 * every buffer) and every completion must come exactly once.
 *
 * Prints TAP 13; exits 0 when every case passes, 1 when one fails, 4 when
 * the devices are missing.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_mtu.h"

struct mtu_env g;

struct shared {
	struct pair p;
	struct area src, rbuf, wbuf;
	enum ibv_mtu mtu;
};

static struct shared S;
static struct ctrs snap0[2];

/*
 * The case: A's link down, a batch at the old MTU leaves (all lost), the
 * path MTU of both QPs changes, the link comes back with a few percent
 * loss both ways and a second batch is posted (B sees its PSNs ahead of
 * what it expects and NAKs, A goes back to the first batch).  Everything
 * must arrive intact and complete once; every packet of the first batch
 * was retransmitted after the change.
 */
static void t_change(enum ibv_mtu to)
{
	struct run r = { .p = &S.p, .src = &S.src, .rbuf = &S.rbuf,
			 .wbuf = &S.wbuf };
	long long base, re0, rp0, to0;
	uint32_t old_pkts;

	diag("path MTU %u -> %u", mtu_bytes(S.mtu), mtu_bytes(to));
	memset(S.rbuf.p, GUARD_BYTE, AREA);
	memset(S.rbuf.exp, GUARD_BYTE, AREA);
	memset(S.wbuf.p, GUARD_BYTE, AREA);
	memset(S.wbuf.exp, GUARD_BYTE, AREA);
	if (!set_loss(1, 3) || !set_loss(0, 100))
		goto out;
	base = first_tx();
	re0 = counter(0, "retransmit_pkts");
	rp0 = counter(0, "hist_replays");
	to0 = counter(0, "timeouts");
	old_pkts = batch(&r, S.mtu, WINDOW_PKTS, (uint32_t)to);
	if (!old_pkts || !wait_first_tx(base, old_pkts))
		goto out;
	if (!set_mtu(S.p.qp[0], to) || !set_mtu(S.p.qp[1], to))
		goto out;
	S.mtu = to;
	if (!set_loss(0, 3) || !batch(&r, to, 1000, 3) || !wait_all(&r))
		goto out;
	area_verify(&S.rbuf, "B's receive buffers");
	area_verify(&S.wbuf, "B's RDMA WRITE target");
	expect_quiet(&S.p);
	diag("%d messages (%u packets at the old MTU, all lost once): %lld packets retransmitted, %lld replays, %lld timeouts",
	     r.n, old_pkts, counter(0, "retransmit_pkts") - re0,
	     counter(0, "hist_replays") - rp0, counter(0, "timeouts") - to0);
	if (counter(0, "retransmit_pkts") - re0 < old_pkts)
		failf("retransmit_pkts moved by %lld, fewer than the %u packets lost",
		      counter(0, "retransmit_pkts") - re0, old_pkts);
	if (counter(0, "hist_replays") - rp0 < 1)
		failf("hist_replays did not move");
out:
	set_loss(0, 0);
	set_loss(1, 0);
}

/* A message started after the change is cut with the new MTU. */
static void t_new_mtu(int unused)
{
	struct run r = { .p = &S.p, .src = &S.src, .rbuf = &S.rbuf,
			 .wbuf = &S.wbuf };
	long long tx0 = counter(0, "tx_pkts");
	long long d;

	(void)unused;
	memset(S.rbuf.p, GUARD_BYTE, AREA);
	memset(S.rbuf.exp, GUARD_BYTE, AREA);
	if (!msg_add(&r, IBV_WR_SEND, 65536) || !msg_post(&r, 0) ||
	    !wait_all(&r))
		return;
	area_verify(&S.rbuf, "B's receive buffer");
	d = counter(0, "tx_pkts") - tx0;
	if (d != npkts(65536, S.mtu))
		failf("a 64 KiB SEND took %lld packets, expected %u (path MTU %u)",
		      d, npkts(65536, S.mtu), mtu_bytes(S.mtu));
}

/*
 * READs and ATOMICs under loss both ways: responses lost make READs
 * resume from the middle, lost ATOMIC acknowledgements make duplicates
 * the responder must answer from its saved result.
 */
static void t_read_atomic(int unused)
{
	uint8_t *src = S.wbuf.p, *dst = S.src.p;
	uint64_t *ctr = (uint64_t *)(S.wbuf.p + AREA - 64);
	uint64_t *old = (uint64_t *)(S.src.p + AREA - 4096);
	static const uint32_t lens[] = { 20000, 0, 1, 4096, 65536, 3333 };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[16];
	bool seen[N_ATOMIC + ARRAY_SIZE(lens)] = { false };
	int total = N_ATOMIC + ARRAY_SIZE(lens), got = 0, i, n, ret;
	size_t off = 0;
	double end;
	long long dup0 = counter(1, "dup_rd_atomic");

	(void)unused;
	memset(dst, GUARD_BYTE, AREA - 4096);
	pattern(src, 200000, 77);
	*ctr = 1000;
	if (!set_loss(0, 5) || !set_loss(1, 5))
		goto out;
	for (i = 0; i < total; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (i < (int)ARRAY_SIZE(lens)) {
			sge.addr = (uintptr_t)(dst + off);
			sge.length = lens[i];
			sge.lkey = S.src.mr->lkey;
			wr.opcode = IBV_WR_RDMA_READ;
			wr.wr.rdma.remote_addr = (uintptr_t)(src + off);
			wr.wr.rdma.rkey = S.wbuf.mr->rkey;
			off = align64(off + lens[i] + GUARD);
		} else {
			int k = i - ARRAY_SIZE(lens);

			sge.addr = (uintptr_t)&old[k];
			sge.length = 8;
			sge.lkey = S.src.mr->lkey;
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.remote_addr = (uintptr_t)ctr;
			wr.wr.atomic.rkey = S.wbuf.mr->rkey;
			wr.wr.atomic.compare_add = ATOMIC_ADD;
		}
		ret = ibv_post_send(S.p.qp[0], &wr, &bad);
		if (ret) {
			failf("ibv_post_send(%d): %s", i, strerror(ret));
			goto out;
		}
	}
	end = now_ms() + WAIT_MS;
	while (got < total && now_ms() < end) {
		n = ibv_poll_cq(S.p.cq[0], 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id >= (uint64_t)total ||
			    seen[wc[i].wr_id]) {
				failf("completion wr_id %llu: %s%s",
				      (unsigned long long)wc[i].wr_id,
				      ibv_wc_status_str(wc[i].status),
				      wc[i].wr_id < (uint64_t)total &&
				      seen[wc[i].wr_id] ? " (again)" : "");
				goto out;
			}
			seen[wc[i].wr_id] = true;
			got++;
		}
		if (n <= 0)
			nap();
	}
	if (got < total) {
		failf("%d of %d READ/ATOMIC completions", got, total);
		goto out;
	}
	for (i = 0, off = 0; i < (int)ARRAY_SIZE(lens); i++) {
		if (memcmp(dst + off, src + off, lens[i]) ||
		    dst[off + lens[i]] != GUARD_BYTE)
			failf("READ %d (%u bytes): data or guard wrong", i,
			      lens[i]);
		off = align64(off + lens[i] + GUARD);
	}
	if (*ctr != 1000 + (uint64_t)N_ATOMIC * ATOMIC_ADD)
		failf("counter %llu after %d FETCH_ADDs of %d from 1000: an atomic ran %s",
		      (unsigned long long)*ctr, N_ATOMIC, ATOMIC_ADD,
		      *ctr > 1000 + (uint64_t)N_ATOMIC * ATOMIC_ADD ?
		      "twice" : "not at all");
	for (i = 0; i < N_ATOMIC; i++) {
		uint64_t want = 1000 + (uint64_t)i * ATOMIC_ADD;
		int k, hits = 0;

		for (k = 0; k < N_ATOMIC; k++)
			hits += old[k] == want;
		if (hits != 1)
			failf("original value %llu returned %d times",
			      (unsigned long long)want, hits);
	}
	diag("duplicates answered from the responder's READ/ATOMIC resources: %lld",
	     counter(1, "dup_rd_atomic") - dup0);
out:
	set_loss(0, 0);
	set_loss(1, 0);
	expect_quiet(&S.p);
}

/* What modify_qp must refuse, leaving the QP as it was. */
static void t_bad_modify(int unused)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;
	struct ibv_qp *ud = NULL, *rc = NULL;
	struct pair fresh;
	int ret, i;
	static const int bad_mtu[] = { 0, 6, 7, 255 };

	(void)unused;
	for (i = 0; i < (int)ARRAY_SIZE(bad_mtu); i++) {
		memset(&a, 0, sizeof(a));
		a.path_mtu = (enum ibv_mtu)bad_mtu[i];
		ret = ibv_modify_qp(S.p.qp[0], &a, IBV_QP_PATH_MTU);
		if (ret != EINVAL)
			failf("RTS QP, path_mtu %d: %s, expected EINVAL",
			      bad_mtu[i], ret ? strerror(ret) : "accepted");
	}
	if (query_qp(S.p.qp[0], &a) || a.qp_state != IBV_QPS_RTS ||
	    a.path_mtu != S.mtu)
		failf("after the refused changes: state %d path_mtu %d, expected RTS and %d",
		      a.qp_state, a.path_mtu, S.mtu);

	ia.send_cq = S.p.cq[0];
	ia.recv_cq = S.p.cq[0];
	ud = ibv_create_qp(g.dev[0].pd, &ia);
	if (!ud) {
		failf("ibv_create_qp(UD): %s", strerror(errno));
		return;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x1234;
	ret = ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	ret = ret ? ret : ibv_modify_qp(ud, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	ret = ret ? ret : ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (ret) {
		failf("UD QP to RTS: %s", strerror(ret));
	} else {
		a.path_mtu = IBV_MTU_1024;
		ret = ibv_modify_qp(ud, &a, IBV_QP_PATH_MTU);
		if (ret != EINVAL)
			failf("UD QP in RTS, path MTU change: %s, expected EINVAL",
			      ret ? strerror(ret) : "accepted");
	}
	ibv_destroy_qp(ud);

	/* an RC QP in INIT has no path yet; one in ERR has none any more */
	if (pair_create(&fresh))
		goto out;
	rc = fresh.qp[0];
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	ret = ibv_modify_qp(rc, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret) {
		failf("RC QP to INIT: %s", strerror(ret));
		goto out;
	}
	a.path_mtu = IBV_MTU_1024;
	ret = ibv_modify_qp(rc, &a, IBV_QP_PATH_MTU);
	if (ret != EINVAL)
		failf("RC QP in INIT, path MTU alone: %s, expected EINVAL",
		      ret ? strerror(ret) : "accepted");
	a.qp_state = IBV_QPS_ERR;
	ret = ibv_modify_qp(rc, &a, IBV_QP_STATE);
	a.path_mtu = IBV_MTU_2048;
	ret = ret ? ret : ibv_modify_qp(rc, &a, IBV_QP_PATH_MTU);
	if (ret != EINVAL)
		failf("RC QP in ERR, path MTU: %s, expected EINVAL",
		      ret ? strerror(ret) : "accepted");
out:
	pair_destroy(&fresh);
	/* the QP the refusals were tried on still works */
	t_new_mtu(0);
}

/*
 * The link stays down across an MTU change: the oldest message fails
 * with RETRY_EXC_ERR after exactly retry_cnt + 1 timeouts, everything
 * behind it is flushed, and the QP is in the error state.
 */
static void t_exhausted(int unused)
{
	struct qopts o = { .mtu = IBV_MTU_2048, .timeout = 16,
			   .retry_cnt = 2 };
	struct area src, rbuf, wbuf;
	struct pair p;
	struct run r = { .p = &p, .src = &src, .rbuf = &rbuf, .wbuf = &wbuf };
	struct ibv_qp_attr a;
	struct ibv_wc wc[16];
	long long base, to0;
	int got = 0, i, n, acc = IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE;
	uint32_t pkts;
	double end;

	(void)unused;
	memset(&src, 0, sizeof(src));
	memset(&rbuf, 0, sizeof(rbuf));
	memset(&wbuf, 0, sizeof(wbuf));
	if (pair_create(&p) || pair_connect(&p, &o) ||
	    !area_get(&src, 0, acc) || !area_get(&rbuf, 1, acc) ||
	    !area_get(&wbuf, 1, acc) || !set_loss(0, 100))
		goto out;
	base = first_tx();
	to0 = counter(0, "timeouts");
	pkts = batch(&r, o.mtu, 40, 1);
	if (!pkts || !wait_first_tx(base, pkts) ||
	    !set_mtu(p.qp[0], IBV_MTU_512) || !batch(&r, IBV_MTU_512, 40, 5))
		goto out;
	end = now_ms() + WAIT_MS;
	while (got < r.n && now_ms() < end) {
		n = ibv_poll_cq(p.cq[0], 16, wc);
		for (i = 0; i < n; i++, got++) {
			enum ibv_wc_status want = got ? IBV_WC_WR_FLUSH_ERR :
						  IBV_WC_RETRY_EXC_ERR;

			if (wc[i].wr_id != (uint64_t)got ||
			    wc[i].status != want)
				failf("completion %d: wr_id %llu %s, expected wr_id %d %s",
				      got, (unsigned long long)wc[i].wr_id,
				      ibv_wc_status_str(wc[i].status), got,
				      ibv_wc_status_str(want));
		}
		if (n <= 0)
			nap();
	}
	if (got != r.n)
		failf("%d of %d completions", got, r.n);
	if (query_qp(p.qp[0], &a) || a.qp_state != IBV_QPS_ERR)
		failf("QP state %d after retry exhaustion, expected ERR",
		      a.qp_state);
	if (counter(0, "timeouts") - to0 != o.retry_cnt + 1)
		failf("%lld timeouts, expected retry_cnt + 1 = %d",
		      counter(0, "timeouts") - to0, o.retry_cnt + 1);
	if (ibv_poll_cq(p.cq[0], 16, wc) > 0)
		failf("a completion beyond the %d messages", r.n);
out:
	set_loss(0, 0);
	pair_destroy(&p);
	area_put(&src);
	area_put(&rbuf);
	area_put(&wbuf);
}

static void t_change_down(int unused)
{
	(void)unused;
	t_change(IBV_MTU_1024);
}

static void t_change_up(int unused)
{
	(void)unused;
	t_change(IBV_MTU_4096);
}

static const struct {
	const char *name;
	void (*fn)(int arg);
} cases[] = {
	{ "path MTU 4096 -> 1024 with every first-batch packet lost: rebuilt as first cut, data and completions exact",
	  t_change_down },
	{ "a message started after the change uses MTU 1024", t_new_mtu },
	{ "READ and ATOMIC under 5% loss both ways: data exact, each atomic executed once",
	  t_read_atomic },
	{ "path MTU 1024 -> 4096 with every first-batch packet lost: rebuilt as first cut, data and completions exact",
	  t_change_up },
	{ "a message started after the change uses MTU 4096", t_new_mtu },
	{ "refused path MTU changes (bad values, UD, INIT, ERR) leave the QP working",
	  t_bad_modify },
	{ "retries exhausted across an MTU change: RETRY_EXC_ERR, then flushed",
	  t_exhausted },
};

static bool split(const char *arg, int i)
{
	char *c = strchr(arg, ':');

	if (!c)
		return false;
	g.ns[i] = strndup(arg, c - arg);
	g.ifname[i] = c + 1;
	return g.ns[i] != NULL;
}

int main(int argc, char **argv)
{
	/* 268 ms: room for a stalled vCPU while the link is down */
	struct qopts o = { .mtu = IBV_MTU_4096, .timeout = 16, .retry_cnt = 7 };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	unsigned int i, failed = 0;
	int rc;

	if (argc != 7 || !split(argv[5], 0) || !split(argv[6], 1)) {
		fprintf(stderr, "usage: %s DEV1 GIDX1 DEV2 GIDX2 NS1:IF1 NS2:IF2\n",
			argv[0]);
		return 2;
	}
	g.dev[0].name = argv[1];
	g.dev[0].gidx = atoi(argv[2]);
	g.dev[1].name = argv[3];
	g.dev[1].gidx = atoi(argv[4]);
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("TAP version 13\n1..%zu\n", ARRAY_SIZE(cases));
	rc = tdev_open_pair(g.dev);
	if (!rc && (!netem_open(0) || !netem_open(1)))
		rc = KSFT_FAIL;
	if (!rc && (pair_create(&S.p) || pair_connect(&S.p, &o) ||
		    !area_get(&S.src, 0, acc) || !area_get(&S.rbuf, 1, acc) ||
		    !area_get(&S.wbuf, 1, acc)))
		rc = KSFT_FAIL;
	if (rc) {
		printf("# devices or QPs not usable: %s\n", why);
		for (i = 1; i <= ARRAY_SIZE(cases); i++)
			printf("%s %u - # SKIP setup failed\n",
			       rc == KSFT_SKIP ? "ok" : "not ok", i);
		return rc;
	}
	S.mtu = o.mtu;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned int f0 = nfail;
		double t0 = now_ms();

		why[0] = '\0';
		ctrs_read(g.dev[0].name, &snap0[0]);
		ctrs_read(g.dev[1].name, &snap0[1]);
		cases[i].fn(0);
		if (nfail == f0) {
			printf("ok %u - %s (%.0f ms)\n", i + 1, cases[i].name,
			       now_ms() - t0);
			continue;
		}
		failed++;
		printf("not ok %u - %s\n", i + 1, cases[i].name);
		why_flush();
		ctrs_diag(g.dev[0].name, &snap0[0]);
		ctrs_diag(g.dev[1].name, &snap0[1]);
	}
	pair_destroy(&S.p);
	area_put(&S.src);
	area_put(&S.rbuf);
	area_put(&S.wbuf);
	for (i = 0; i < 2; i++)
		tdev_close(&g.dev[i]);
	netem_close();
	printf("# %u of %zu cases failed\n", failed, ARRAY_SIZE(cases));
	return failed ? KSFT_FAIL : KSFT_PASS;
}
