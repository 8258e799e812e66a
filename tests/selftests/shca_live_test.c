// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Live connections for packet_fuzz.sh: on one device, QPs connected to
 * each other through the device's same-host path keep moving checked
 * data until SIGUSR1 (or SIGTERM, or SECONDS), while the fuzzer
 * (roce_inject.py, in another namespace) aims packets at them.  Every
 * 50 ms the program writes what the fuzzer needs to aim (QPNs, PSNs, the
 * published MR's R_Key, address and length, the UD Q_Key) to STATE, a
 * JSON file replaced atomically.
 *
 *   rc_victim     RC requester A -> responder B, published (shca_live_rc.c)
 *   rc_bystander  RC pair in its own PD, nothing published: must finish
 *   uc            UC SENDs, QPNs and PSNs published
 *   ud            UD SENDs, QPNs and Q_Key published
 *
 * SIGUSR2 lets the RC victim finish what it has outstanding and go on
 * with a new pair (packet_fuzz.sh's phase of packets it must survive).
 *
 * After the stop every link finishes what is outstanding and the program
 * prints one line per check, "RESULT NAME 0|1 TEXT" (0: passed), for
 * the script to turn into TAP, and "# ..." diagnostics.
 *
 * Usage: shca_live_test DEVICE GID_INDEX STATE SECONDS [SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_live.h"

struct live_opts opt;
struct test_dev dev;
volatile sig_atomic_t stopping;

/* ---- the data alphabet --------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint8_t live_byte(uint64_t m, uint32_t off)
{
	if (off < 4)
		return (m >> (7 * (3 - off))) & 0x7f;
	return (mix64((m << 16) ^ off) >> 56) & 0x7f;
}

void live_fill(uint8_t *p, uint64_t m, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = live_byte(m, i);
}

bool live_match(const uint8_t *p, uint64_t m, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != live_byte(m, i))
			return false;
	return true;
}

uint64_t live_ident(const uint8_t *p)
{
	return ((uint64_t)p[0] << 21) | (p[1] << 14) | (p[2] << 7) | p[3];
}

const char *const cls_name[C_NCLS] = {
	"ok", "foreign bytes", "poison (never landed)",
	"short by whole MTUs", "a later message", "other data",
};

enum cls classify(const uint8_t *p, uint32_t got, uint64_t m, uint32_t want,
		  uint32_t (*next_len)(uint64_t m), unsigned int *skip)
{
	unsigned int k;
	uint32_t i;
	bool poison = false;

	if (got == want && live_match(p, m, want))
		return C_OK;
	for (i = 0; i < got; i++) {
		if (p[i] >= FOREIGN_MIN)
			return C_FOREIGN;
		if (p[i] == POISON)
			poison = true;
	}
	if (poison)
		return C_STALE;
	if (got < want && got % LIVE_MTU == 0 && live_match(p, m, got))
		return C_SHORT;
	for (k = 1; next_len && k <= 2 * RQ_DEPTH; k++)
		if (got == next_len(m + k) && live_match(p, m + k, got)) {
			*skip = k - 1;
			return C_SKIPPED;
		}
	return C_OTHER;
}

uint32_t rnd32(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

uint32_t pick_len(uint32_t *x, uint32_t min, uint32_t max)
{
	static const uint32_t set[] = {
		0, 1, 4, 7, 8, LIVE_MTU - 1, LIVE_MTU, LIVE_MTU + 1,
		2 * LIVE_MTU - 1, 2 * LIVE_MTU + 5, 3 * LIVE_MTU, 4 * LIVE_MTU,
	};
	uint32_t r = rnd32(x), len;

	if (r % 3)
		len = set[(r >> 8) % ARRAY_SIZE(set)];
	else
		len = (r >> 8) % (max + 1);
	if (len < min)
		len = min;
	return len > max ? max : len;
}

/* ---- UC and UD pairs: sender S, receiver R ---------------------------------- */

/*
 * A message every 2 ms: unpaced, the senders fill the receive queue of
 * the device (rx_drop_queue_full) and take the CPU the fuzzer needs.
 */
#define DG_GAP_MS	2.0
/* a receiver must still be getting messages this close to the stop */
#define ALIVE_MS	SCALED_MS(5000.0)

static double stop_ms;

struct dg_link {
	const char *name;
	enum ibv_qp_type type;
	uint32_t maxlen;
	struct ibv_pd *pd;
	uint8_t *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qs, *qr;
	struct ibv_ah *ah;
	uint32_t x, psn0, next_psn;
	uint64_t n, done;		/* sends posted, completed */
	int64_t last_m;			/* newest message received */
	unsigned int gen;
	bool dead;
	double next_post;		/* paced: DG_GAP_MS apart */
	double last_ok;			/* when a message last arrived whole */
	uint64_t verified, foreign, shorts, lost, ended;
	unsigned int bad;
	char first_bad[400];
};

static void dg_bad(struct dg_link *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void dg_bad(struct dg_link *l, const char *fmt, ...)
{
	char line[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!l->bad++)
		snprintf(l->first_bad, sizeof(l->first_bad), "%s", line);
	if (l->bad <= 10)
		diag("%s: %s", l->name, line);
}

static uint32_t dg_len(const struct dg_link *l, uint64_t m)
{
	uint32_t x = (uint32_t)(m * 0x9e3779b1U) | 1;

	return pick_len(&x, 4, l->maxlen);
}

static uint32_t rbuf_size(const struct dg_link *l)
{
	return l->type == IBV_QPT_UD ? GRH_LEN + SLOT : SLOT;
}

static int dg_post_recv(struct dg_link *l, unsigned int i)
{
	uint32_t sz = rbuf_size(l);
	struct ibv_sge sg = {
		.addr = (uintptr_t)(l->rbuf + i * sz), .length = sz,
		.lkey = l->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *badwr;

	memset(l->rbuf + i * sz, POISON, sz);
	return ibv_post_recv(l->qr, &wr, &badwr);
}

static int dg_modify(struct dg_link *l, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = UD_QKEY, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	bool ud = l->type == IBV_QPT_UD;

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | (ud ? IBV_QP_QKEY :
					 IBV_QP_ACCESS_FLAGS)))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (!ud) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dest;
		a.rq_psn = l->psn0;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = dev.gid;
		a.ah_attr.grh.sgid_index = (uint8_t)dev.gidx;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
	}
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | (ud ? 0 :
			  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN)))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = l->psn0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void dg_teardown(struct dg_link *l)
{
	if (l->ah)
		ibv_destroy_ah(l->ah);
	if (l->qs)
		ibv_destroy_qp(l->qs);
	if (l->qr)
		ibv_destroy_qp(l->qr);
	if (l->scq)
		ibv_destroy_cq(l->scq);
	if (l->rcq)
		ibv_destroy_cq(l->rcq);
	l->ah = NULL;
	l->qs = l->qr = NULL;
	l->scq = l->rcq = NULL;
}

static int dg_connect(struct dg_link *l)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = l->type,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = dev.gid, .sgid_index = (uint8_t)dev.gidx,
			 .hop_limit = 64 },
	};
	unsigned int i;

	l->scq = ibv_create_cq(dev.ctx, 2 * DEPTH, NULL, NULL, 0);
	l->rcq = ibv_create_cq(dev.ctx, 2 * RQ_DEPTH, NULL, NULL, 0);
	if (!l->scq || !l->rcq)
		return -1;
	ia.send_cq = ia.recv_cq = l->scq;
	l->qs = ibv_create_qp(l->pd, &ia);
	ia.send_cq = ia.recv_cq = l->rcq;
	l->qr = ibv_create_qp(l->pd, &ia);
	if (!l->qs || !l->qr)
		return -1;
	if (dg_modify(l, l->qs, l->qr->qp_num) ||
	    dg_modify(l, l->qr, l->qs->qp_num))
		return -1;
	if (l->type == IBV_QPT_UD) {
		l->ah = ibv_create_ah(l->pd, &aa);
		if (!l->ah)
			return -1;
	}
	for (i = 0; i < RQ_DEPTH; i++)
		if (dg_post_recv(l, i))
			return -1;
	l->next_psn = l->psn0;
	l->done = l->n;
	l->last_m = (int64_t)l->n - 1;
	return 0;
}

static struct dg_link *dg_new(const char *name, enum ibv_qp_type type,
			      uint32_t maxlen, uint32_t seed)
{
	struct dg_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->name = name;
	l->type = type;
	l->maxlen = maxlen;
	l->x = seed | 1;
	l->psn0 = seed & 0xffffff;
	l->pd = ibv_alloc_pd(dev.ctx);
	l->sbuf = zalloc(DEPTH * SLOT);
	l->rbuf = zalloc(RQ_DEPTH * (GRH_LEN + SLOT));
	if (l->pd && l->sbuf && l->rbuf) {
		l->smr = ibv_reg_mr(l->pd, l->sbuf, DEPTH * SLOT,
				    IBV_ACCESS_LOCAL_WRITE);
		l->rmr = ibv_reg_mr(l->pd, l->rbuf,
				    RQ_DEPTH * (GRH_LEN + SLOT),
				    IBV_ACCESS_LOCAL_WRITE);
	}
	if (!l->smr || !l->rmr || dg_connect(l)) {
		dg_bad(l, "setting up: %s", strerror(errno));
		l->dead = true;
	}
	return l;
}

static void dg_recv(struct dg_link *l, const struct ibv_wc *wc)
{
	uint8_t *p = l->rbuf + wc->wr_id * rbuf_size(l);
	uint32_t len = wc->byte_len, i;
	uint64_t m;

	if (l->type == IBV_QPT_UD) {
		p += GRH_LEN;
		len = len >= GRH_LEN ? len - GRH_LEN : 0;
	}
	if (wc->opcode != IBV_WC_RECV || len < 4 ||
	    (wc->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV))) {
		l->foreign++;
		return;
	}
	for (i = 0; i < len; i++)
		if (p[i] >= FOREIGN_MIN) {
			l->foreign++;
			return;
		}
	m = live_ident(p);
	if ((int64_t)m > l->last_m && m < l->n) {
		if (len == dg_len(l, m) && live_match(p, m, len)) {
			l->lost += m - l->last_m - 1;
			l->last_m = (int64_t)m;
			l->verified++;
			l->last_ok = now_ms();
			return;
		}
		if (l->type == IBV_QPT_UC && len < dg_len(l, m) &&
		    len % LIVE_MTU == 0 && live_match(p, m, len)) {
			/* an empty SEND_LAST of the fuzzer ended it */
			l->shorts++;
			l->last_m = (int64_t)m;
			return;
		}
	}
	dg_bad(l, "gen %u: a receive of %u bytes is none of our messages "
	       "(%" PRIu64 " after %" PRId64 ", %" PRIu64 " sent), and "
	       "has no byte of the fuzzer: %02x %02x %02x %02x ...", l->gen,
	       len, m, l->last_m, l->n, p[0], p[1], p[2], p[3]);
}

static void dg_end_gen(struct dg_link *l, const char *why, int st)
{
	if (l->gen < 10)
		diag("%s gen %u: ended: %s %s", l->name, l->gen, why,
		     st_str(st));
	l->ended++;
	dg_teardown(l);
	l->gen++;
	l->psn0 = (l->psn0 + 0x10000) & 0xffffff;
	if (stopping || l->gen > 1000 || dg_connect(l)) {
		l->dead = true;
		if (!stopping && l->gen <= 1000)
			dg_bad(l, "reconnecting: %s", strerror(errno));
	}
}

static void dg_step(struct dg_link *l, double now)
{
	struct ibv_send_wr wr = {}, *badwr;
	struct ibv_sge sg;
	struct ibv_wc wc[16];
	int n, i;

	if (l->dead)
		return;
	n = ibv_poll_cq(l->rcq, 16, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
			continue;
		if (wc[i].status != IBV_WC_SUCCESS) {
			/* e.g. a fuzzer's SEND longer than the buffer */
			dg_end_gen(l, "a receive failed:", wc[i].status);
			return;
		}
		dg_recv(l, &wc[i]);
		if (dg_post_recv(l, wc[i].wr_id)) {
			dg_end_gen(l, "a receive could not be reposted", 0);
			return;
		}
	}
	n = ibv_poll_cq(l->scq, 16, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			if (l->type == IBV_QPT_UD)
				dg_bad(l, "a send failed: %s",
				       st_str(wc[i].status));
			dg_end_gen(l, "a send failed:", wc[i].status);
			return;
		}
		l->done++;
	}
	while (!stopping && l->n - l->done < DEPTH && now >= l->next_post) {
		uint32_t len = dg_len(l, l->n);
		uint8_t *p = l->sbuf + (l->n % DEPTH) * SLOT;

		live_fill(p, l->n, len);
		sg.addr = (uintptr_t)p;
		sg.length = len;
		sg.lkey = l->smr->lkey;
		wr.wr_id = l->n;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (l->ah) {
			wr.wr.ud.ah = l->ah;
			wr.wr.ud.remote_qpn = l->qr->qp_num;
			wr.wr.ud.remote_qkey = UD_QKEY;
		}
		if (ibv_post_send(l->qs, &wr, &badwr)) {
			dg_end_gen(l, "a post failed", 0);
			return;
		}
		l->n++;
		l->next_post = now + DG_GAP_MS;
		l->next_psn = (l->next_psn + (len + LIVE_MTU - 1) / LIVE_MTU +
			       !len) & 0xffffff;
	}
}

static int dg_state(const struct dg_link *l, char *buf, size_t len)
{
	if (l->dead || !l->qs)
		return snprintf(buf, len, "\"gen\": %u", l->gen);
	return snprintf(buf, len, "\"gen\": %u, \"src_qpn\": %u, "
			"\"dst_qpn\": %u, \"next_psn\": %u, \"qkey\": %u",
			l->gen, l->qs->qp_num, l->qr->qp_num, l->next_psn,
			UD_QKEY);
}

static int dg_report(struct dg_link *l)
{
	int ok;

	diag("%s: %u generation(s), %" PRIu64 " sent, %" PRIu64
	     " received whole and checked, %" PRIu64 " lost, %" PRIu64
	     " of the fuzzer, %" PRIu64 " cut short by it", l->name,
	     l->gen + 1, l->n, l->verified, l->lost, l->foreign, l->shorts);
	if (!l->verified)
		dg_bad(l, "no message arrived");
	else if (stop_ms - l->last_ok > ALIVE_MS)
		dg_bad(l, "no message arrived in the last %.1f s before the "
		       "stop", (stop_ms - l->last_ok) / 1e3);
	ok = !l->bad;
	printf("RESULT %s %d %s: every message received is one sent, whole, "
	       "or the fuzzer's; still receiving at the end%s%s\n", l->name, !ok, l->name,
	       ok ? "" : "; first failure: ", ok ? "" : l->first_bad);
	dg_teardown(l);
	if (l->smr)
		ibv_dereg_mr(l->smr);
	if (l->rmr)
		ibv_dereg_mr(l->rmr);
	if (l->pd)
		ibv_dealloc_pd(l->pd);
	free(l->sbuf);
	free(l->rbuf);
	free(l);
	return ok ? 0 : 1;
}

/* ---- driver ---------------------------------------------------------------- */

static struct rc_link *victim, *bystander;
static struct dg_link *uc, *ud;

static void write_state(double t0)
{
	char rc[512], ucs[256], uds[256], tmp[512];
	FILE *f;

	rc_state(victim, rc, sizeof(rc));
	dg_state(uc, ucs, sizeof(ucs));
	dg_state(ud, uds, sizeof(uds));
	snprintf(tmp, sizeof(tmp), "%s.tmp", opt.state);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "{\"ms\": %.0f, \"mtu\": %d, \"rc\": {%s}, \"uc\": {%s}, "
		"\"ud\": {%s}}\n", now_ms() - t0, LIVE_MTU, rc, ucs, uds);
	if (fclose(f) == 0)
		rename(tmp, opt.state);
}

static volatile sig_atomic_t recycle;

static void on_signal(int sig)
{
	if (sig == SIGUSR2)
		recycle = 1;
	else
		stopping = 1;
}

int main(int argc, char **argv)
{
	double t0, last_state = 0, stop_at, now;
	int rc = 0;
	bool all;

	if (argc < 5) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX STATE SECONDS "
			"[SEED]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	opt.dev = argv[1];
	opt.gidx = atoi(argv[2]);
	opt.state = argv[3];
	opt.seconds = (unsigned int)atoi(argv[4]);
	opt.seed = argc > 5 ? (uint32_t)strtoul(argv[5], NULL, 0) : 1;
	signal(SIGUSR1, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGUSR2, on_signal);
	dev.name = opt.dev;
	dev.gidx = opt.gidx;
	rc = tdev_open(&dev);
	if (rc) {
		printf("RESULT open 1 cannot open %s\n", opt.dev);
		return rc;
	}
	victim = rc_new("rc_victim", true, opt.seed * 7919U, opt.seed * 31U);
	bystander = rc_new("rc_bystander", false,
			   opt.seed * 7919U + 0x800000, opt.seed * 37U);
	uc = dg_new("uc", IBV_QPT_UC, 3 * LIVE_MTU, opt.seed * 41U + 1);
	ud = dg_new("ud", IBV_QPT_UD, LIVE_MTU, opt.seed * 43U + 1);
	if (!victim || !bystander || !uc || !ud)
		return 1;
	t0 = now_ms();
	write_state(t0);
	diag("live: device %s, seed %u; state in %s", opt.dev, opt.seed,
	     opt.state);
	while (!stopping && now_ms() - t0 < opt.seconds * 1e3) {
		now = now_ms();
		if (recycle) {
			recycle = 0;
			rc_recycle(victim);
		}
		rc_step(victim, now);
		rc_step(bystander, now);
		dg_step(uc, now);
		dg_step(ud, now);
		if (now - last_state >= 50) {
			write_state(t0);
			last_state = now;
		}
		usleep(1000);
	}
	stopping = 1;
	diag("live: stopping after %.1f s", (now_ms() - t0) / 1e3);
	stop_at = now_ms();
	stop_ms = stop_at;
	do {
		now = now_ms();
		all = rc_drained(victim, now);
		all &= rc_drained(bystander, now);
		dg_step(uc, now);
		dg_step(ud, now);
		usleep(1000);
	} while (!all && now - stop_at < DRAIN_MS);
	diag("live: drained in %.1f s", (now_ms() - stop_at) / 1e3);
	rc = rc_report(victim);
	rc |= rc_report(bystander);
	rc |= dg_report(uc);
	rc |= dg_report(ud);
	tdev_close(&dev);
	unlink(opt.state);
	return rc ? KSFT_FAIL : KSFT_PASS;
}
