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
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define WAIT_MS		60000	/* deadline for a batch of completions */
#define GUARD		64	/* guard bytes after every message buffer */
#define GUARD_BYTE	0xa5
#define MAX_MSGS	64
#define AREA		(4u << 20)	/* bytes per buffer area */
#define CQ_DEPTH	512
#define WINDOW_PKTS	120	/* stay below the requester's 128 */
#define IMM		0x5eed1234u
#define N_ATOMIC	40
#define ATOMIC_ADD	3

static struct {
	struct test_dev dev[2];
	const char *ns[2], *ifname[2];
} g;


static void nap(void)
{
	struct timespec ts = { 0, 200000 };

	nanosleep(&ts, NULL);
}

/* ---- counters and loss -------------------------------------------- */

static long long counter(int dev, const char *name)
{
	unsigned long long v;

	if (!ctr_read(g.dev[dev].name, name, &v)) {
		failf("cannot read counter %s of %s", name, g.dev[dev].name);
		return -1;
	}
	return (long long)v;
}

/*
 * Loss is switched with route netlink messages on sockets opened in each
 * side's namespace: spawning tc takes seconds on a loaded emulated guest,
 * longer than the ACK timeouts the link may stay down.
 */
static int nl_fd[2] = { -1, -1 };
static int nl_ifindex[2];
static uint32_t nl_seq;

/* A route netlink socket in side @i's namespace, and its interface. */
static bool netem_open(int i)
{
	char path[256];
	int self, fd;
	bool ok;

	snprintf(path, sizeof(path), "/run/netns/%s", g.ns[i]);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "cannot enter netns %s: %s\n", g.ns[i],
			strerror(errno));
		return false;
	}
	nl_fd[i] = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
			  NETLINK_ROUTE);
	nl_ifindex[i] = (int)if_nametoindex(g.ifname[i]);
	if (setns(self, CLONE_NEWNET)) {
		fprintf(stderr, "cannot return to the first netns: %s\n",
			strerror(errno));
		exit(KSFT_FAIL);
	}
	close(fd);
	close(self);
	ok = nl_fd[i] >= 0 && nl_ifindex[i] > 0;
	if (!ok)
		fprintf(stderr, "no netlink socket or no %s in %s\n",
			g.ifname[i], g.ns[i]);
	return ok;
}

static void nl_attr(struct nlmsghdr *n, unsigned short type,
		    const void *data, unsigned short len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n +
					       NLMSG_ALIGN(n->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/*
 * Drop @pct percent of the packets side @dev sends: change the loss of the
 * root netem qdisc of its interface; returns once the kernel applied it.
 */
static bool set_loss(int dev, int pct)
{
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
		char attrs[128];
	} req;
	struct tc_netem_qopt q = {
		.limit = 1000,
		.loss = pct >= 100 ? UINT32_MAX :
			(uint32_t)((uint64_t)UINT32_MAX * pct / 100),
	};
	char reply[4096];
	struct nlmsghdr *h;
	ssize_t len;
	int err = -EIO;

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	req.n.nlmsg_type = RTM_NEWQDISC;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.n.nlmsg_seq = ++nl_seq;
	req.t.tcm_family = AF_UNSPEC;
	req.t.tcm_ifindex = nl_ifindex[dev];
	req.t.tcm_parent = TC_H_ROOT;
	nl_attr(&req.n, TCA_KIND, "netem", sizeof("netem"));
	nl_attr(&req.n, TCA_OPTIONS, &q, sizeof(q));
	if (send(nl_fd[dev], &req, req.n.nlmsg_len, 0) < 0) {
		failf("netem change on %s: send: %s", g.ifname[dev],
		      strerror(errno));
		return false;
	}
	len = recv(nl_fd[dev], reply, sizeof(reply), 0);
	for (h = (struct nlmsghdr *)reply; len > 0 && NLMSG_OK(h, len);
	     h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_seq == nl_seq) {
			err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			break;
		}
	}
	if (err) {
		failf("netem loss %d%% on %s in %s: %s", pct, g.ifname[dev],
		      g.ns[dev], strerror(-err));
		return false;
	}
	return true;
}

/* ---- buffers -------------------------------------------------------- */

struct area {
	uint8_t *p;		/* what the device sees */
	uint8_t *exp;		/* what it must hold */
	struct ibv_mr *mr;
};

static bool area_get(struct area *a, int dev, int access)
{
	memset(a, 0, sizeof(*a));
	if (posix_memalign((void **)&a->p, 4096, AREA))
		return false;
	a->exp = malloc(AREA);
	if (!a->exp)
		return false;
	memset(a->p, GUARD_BYTE, AREA);
	memset(a->exp, GUARD_BYTE, AREA);
	a->mr = ibv_reg_mr(g.dev[dev].pd, a->p, AREA, access);
	if (!a->mr) {
		failf("ibv_reg_mr on %s: %s", g.dev[dev].name, strerror(errno));
		return false;
	}
	return true;
}

static void area_put(struct area *a)
{
	mr_dereg(a->mr);
	free(a->p);
	free(a->exp);
	memset(a, 0, sizeof(*a));
}

static bool area_verify(const struct area *a, const char *what)
{
	size_t i, bad = 0, first = 0;

	for (i = 0; i < AREA; i++) {
		if (a->p[i] == a->exp[i])
			continue;
		if (!bad++)
			first = i;
	}
	if (bad)
		failf("%s: %zu byte(s) wrong, first at offset %zu: 0x%02x, expected 0x%02x",
		      what, bad, first, a->p[first], a->exp[first]);
	return !bad;
}

/* ---- QPs -------------------------------------------------------------- */

struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	uint32_t psn[2];
};

struct qopts {
	enum ibv_mtu mtu;
	uint8_t timeout, retry_cnt;
};

static int pair_create(struct pair *p)
{
	struct qp_spec spec = qp_spec_simple(CQ_DEPTH, 128);

	memset(p, 0, sizeof(*p));
	if (qp_pair_create(g.dev, &spec, p->qp, p->cq))
		return -1;
	p->psn[0] = (uint32_t)random() & 0xffffff;
	p->psn[1] = (uint32_t)random() & 0xffffff;
	return 0;
}

static void pair_destroy(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		qp_cqs_destroy(p->qp[i], p->cq[i], NULL, g.dev[i].name);
	memset(p, 0, sizeof(*p));
}

static int pair_connect(struct pair *p, const struct qopts *o)
{
	struct rc_path path[2];
	enum ibv_qp_state at;
	int i, ret;

	for (i = 0; i < 2; i++) {
		struct rc_path r = {
			.access = QP_ACC_ALL,
			.mtu = o->mtu,
			.dest_qpn = p->qp[!i]->qp_num,
			.rq_psn = p->psn[!i],
			.sq_psn = p->psn[i],
			.dgid = g.dev[!i].gid,
			.sgid_index = g.dev[i].gidx,
			.rd_atomic = 16,
			.min_rnr_timer = 12,
			.timeout = o->timeout,
			.retry_cnt = o->retry_cnt,
			.rnr_retry = 7,
		};

		path[i] = r;
	}
	ret = rc_connect_pair(p->qp, path, &i, &at);
	if (ret)
		failf("connecting the QPs: %s", strerror(ret));
	return ret ? -1 : 0;
}

static int query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	struct ibv_qp_init_attr init;

	return ibv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_PATH_MTU, &init);
}

/* Path MTU of an RTS QP: must be accepted, stay RTS and read back. */
static bool set_mtu(struct ibv_qp *qp, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = { .path_mtu = mtu };
	int ret = ibv_modify_qp(qp, &a, IBV_QP_PATH_MTU);

	if (ret) {
		failf("ibv_modify_qp(IBV_QP_PATH_MTU %d) on RTS QP %u: %s",
		      mtu, qp->qp_num, strerror(ret));
		return false;
	}
	if (query_qp(qp, &a) || a.qp_state != IBV_QPS_RTS ||
	    a.path_mtu != mtu) {
		failf("QP %u after the MTU change: state %d path_mtu %d",
		      qp->qp_num, a.qp_state, a.path_mtu);
		return false;
	}
	return true;
}

/* ---- messages -------------------------------------------------------- */

struct msg {
	enum ibv_wr_opcode op;
	uint32_t len;
	size_t src, dst;	/* offsets in A's source area, B's area */
	int recv;		/* receive it consumes on B, or -1 */
};

struct run {
	struct pair *p;
	struct area *src, *rbuf, *wbuf;
	struct msg m[MAX_MSGS];
	int n, nrecv;
	size_t src_off, rbuf_off, wbuf_off;
};

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;
}

static uint32_t npkts(uint32_t len, enum ibv_mtu mtu)
{
	uint32_t n = (len + mtu_bytes(mtu) - 1) / mtu_bytes(mtu);

	return n ? n : 1;
}

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

static bool consumes_recv(enum ibv_wr_opcode op)
{
	return op != IBV_WR_RDMA_WRITE;
}

/* Add a message and post what it needs on B (its receive). */
static bool msg_add(struct run *r, enum ibv_wr_opcode op, uint32_t len)
{
	struct msg *m = &r->m[r->n];
	bool to_rbuf = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	struct area *dst = to_rbuf ? r->rbuf : r->wbuf;
	size_t *doff = to_rbuf ? &r->rbuf_off : &r->wbuf_off;
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge;
	int ret;

	if (r->n == MAX_MSGS || r->src_off + len > AREA ||
	    *doff + len + GUARD > AREA) {
		failf("test bug: message table full");
		return false;
	}
	m->op = op;
	m->len = len;
	m->src = r->src_off;
	m->dst = *doff;
	m->recv = -1;
	pattern(r->src->p + m->src, len, (uint32_t)(r->n * 7919 + len));
	r->src_off = align64(r->src_off + len);
	*doff = align64(*doff + len + GUARD);
	memcpy(dst->exp + m->dst, r->src->p + m->src, len);
	if (consumes_recv(op)) {
		/* a receive with room for the message and nothing more */
		m->recv = r->nrecv++;
		sge.addr = (uintptr_t)(r->rbuf->p + m->dst);
		sge.length = to_rbuf ? len : 0;
		sge.lkey = r->rbuf->mr->lkey;
		wr.wr_id = 1000 + m->recv;
		wr.sg_list = &sge;
		wr.num_sge = to_rbuf ? 1 : 0;
		ret = ibv_post_recv(r->p->qp[1], &wr, &bad);
		if (ret) {
			failf("ibv_post_recv: %s", strerror(ret));
			return false;
		}
	}
	r->n++;
	return true;
}

static bool msg_post(struct run *r, int i)
{
	struct msg *m = &r->m[i];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(r->src->p + m->src),
		.length = m->len,
		.lkey = r->src->mr->lkey,
	};
	int ret;

	wr.wr_id = i;
	wr.opcode = m->op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(IMM + i);
	wr.wr.rdma.remote_addr = (uintptr_t)(r->wbuf->p + m->dst);
	wr.wr.rdma.rkey = r->wbuf->mr->rkey;
	ret = ibv_post_send(r->p->qp[0], &wr, &bad);
	if (ret)
		failf("ibv_post_send(message %d): %s", i, strerror(ret));
	return !ret;
}

/*
 * Add messages from a mix of sizes and opcodes, at most @max_pkts packets
 * at @mtu, and post them.  Returns the packets they take.
 */
static uint32_t batch(struct run *r, enum ibv_mtu mtu, uint32_t max_pkts,
		      uint32_t seed)
{
	static const struct {
		enum ibv_wr_opcode op;
		uint32_t len;
	} mix[] = {
		{ IBV_WR_SEND, 65536 }, { IBV_WR_RDMA_WRITE, 12289 },
		{ IBV_WR_SEND, 3000 }, { IBV_WR_SEND, 0 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 10000 },
		{ IBV_WR_SEND_WITH_IMM, 8192 }, { IBV_WR_RDMA_WRITE, 4097 },
		{ IBV_WR_SEND, 1 }, { IBV_WR_RDMA_WRITE, 49152 },
		{ IBV_WR_SEND, 20000 }, { IBV_WR_RDMA_WRITE, 1024 },
	};
	uint32_t pkts = 0, k, i, n;
	int first = r->n;

	for (k = 0; k < ARRAY_SIZE(mix); k++) {
		i = (k + seed) % ARRAY_SIZE(mix);
		n = npkts(mix[i].len, mtu);
		if (pkts + n > max_pkts)
			continue;
		if (!msg_add(r, mix[i].op, mix[i].len))
			return 0;
		pkts += n;
	}
	for (k = (uint32_t)first; k < (uint32_t)r->n; k++)
		if (!msg_post(r, (int)k))
			return 0;
	return pkts;
}

/*
 * Wait for every message's completion on A and every receive on B;
 * each exactly once, successful, with the right opcode and length.
 */
static bool wait_all(struct run *r)
{
	int seen[MAX_MSGS] = { 0 }, rseen[MAX_MSGS] = { 0 };
	int got = 0, rgot = 0, i, k, n;
	double end = now_ms() + WAIT_MS;
	struct ibv_wc wc[16];

	while ((got < r->n || rgot < r->nrecv) && now_ms() < end) {
		for (k = 0; k < 2; k++) {
			n = ibv_poll_cq(r->p->cq[k], 16, wc);
			if (n < 0) {
				failf("ibv_poll_cq: %d", n);
				return false;
			}
			for (i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					failf("%s completion wr_id %llu: %s",
					      k ? "B" : "A",
					      (unsigned long long)wc[i].wr_id,
					      ibv_wc_status_str(wc[i].status));
					return false;
				}
				if (!k && wc[i].wr_id < MAX_MSGS) {
					seen[wc[i].wr_id]++;
					got++;
					continue;
				}
				if (k && wc[i].wr_id >= 1000 &&
				    wc[i].wr_id < 1000 + MAX_MSGS) {
					int rv = (int)wc[i].wr_id - 1000;

					rseen[rv]++;
					rgot++;
					for (int j = 0; j < r->n; j++) {
						struct msg *m = &r->m[j];
						bool imm = m->op !=
							   IBV_WR_SEND;

						if (m->recv != rv)
							continue;
						if (wc[i].byte_len != m->len ||
						    !!(wc[i].wc_flags &
						       IBV_WC_WITH_IMM) != imm ||
						    (imm && ntohl(wc[i].imm_data) !=
						     IMM + (uint32_t)j))
							failf("receive %d (message %d, %u bytes): byte_len %u, flags 0x%x, imm 0x%x",
							      rv, j, m->len,
							      wc[i].byte_len,
							      wc[i].wc_flags,
							      ntohl(wc[i].imm_data));
					}
					continue;
				}
				failf("unexpected completion wr_id %llu on %s",
				      (unsigned long long)wc[i].wr_id,
				      k ? "B" : "A");
			}
		}
		if (!n)
			nap();
	}
	for (i = 0; i < r->n; i++)
		if (seen[i] != 1)
			failf("message %d (%u bytes, opcode %d): %d completions",
			      i, r->m[i].len, r->m[i].op, seen[i]);
	for (i = 0; i < r->nrecv; i++)
		if (rseen[i] != 1)
			failf("receive %d: %d completions", i, rseen[i]);
	return got == r->n && rgot == r->nrecv;
}

/* Nothing more may complete for a while. */
static void expect_quiet(struct pair *p)
{
	double end = now_ms() + 300;
	struct ibv_wc wc;
	int k;

	while (now_ms() < end) {
		for (k = 0; k < 2; k++)
			if (ibv_poll_cq(p->cq[k], 1, &wc) > 0)
				failf("extra completion on %s: wr_id %llu %s",
				      k ? "B" : "A",
				      (unsigned long long)wc.wr_id,
				      ibv_wc_status_str(wc.status));
		nap();
	}
}

/* A's first transmissions (packets sent that were not retransmissions). */
static long long first_tx(void)
{
	return counter(0, "tx_pkts") - counter(0, "retransmit_pkts");
}

static bool wait_first_tx(long long base, uint32_t pkts)
{
	double end = now_ms() + 10000;
	long long d = 0;

	while (now_ms() < end) {
		d = first_tx() - base;
		if (d >= pkts)
			break;
		nap();
	}
	if (d != pkts) {
		failf("%lld packets first sent, expected %u at the old MTU",
		      d, pkts);
		return false;
	}
	return true;
}

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
	for (i = 0; i < 2; i++) {
		tdev_close(&g.dev[i]);
		close(nl_fd[i]);
	}
	printf("# %u of %zu cases failed\n", failed, ARRAY_SIZE(cases));
	return failed ? KSFT_FAIL : KSFT_PASS;
}
