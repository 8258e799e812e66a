// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The helpers of shca_test.h, linked into every selftest program.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_test.h"

/* ---- failures and TAP ------------------------------------------------ */

char why[4096];
unsigned int nfail;
int n_cases, n_failed;

void failf(const char *fmt, ...)
{
	size_t used = strlen(why);
	va_list ap;

	nfail++;
	if (used && used + 2 < sizeof(why)) {
		why[used++] = '\n';
		why[used] = '\0';
	}
	if (used + 1 >= sizeof(why))
		return;
	va_start(ap, fmt);
	vsnprintf(why + used, sizeof(why) - used, fmt, ap);
	va_end(ap);
}

void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void why_flush(void)
{
	char *line, *save = NULL;

	for (line = strtok_r(why, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
	why[0] = '\0';
}

void case_result(int cond, const char *what)
{
	n_cases++;
	if (!cond)
		n_failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n_cases, what);
	if (cond)
		why[0] = '\0';
	else
		why_flush();
	fflush(stdout);
}

/* ---- time, test data ------------------------------------------------- */

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void uverbs_maps_read(struct uverbs_maps *m)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	m->n = 0;
	if (!f)
		return;
	while (m->n < (int)ARRAY_SIZE(m->lo) && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %*s %llx", &m->lo[m->n], &m->hi[m->n],
			   &m->off[m->n]) == 3)
			m->n++;
	}
	fclose(f);
}

int time_scale(void)
{
	static int scale;
	const char *e;
	char *end;
	long v;

	if (scale)
		return scale;
	e = getenv("SHCA_TIME_SCALE");
	v = e ? strtol(e, &end, 10) : 1;
	if (!e || *end || v < 1 || v > 99)
		v = 1;
	scale = v;
	return scale;
}

int scaled_timeout(int t)
{
	int scale;

	for (scale = 1; scale < time_scale() && t < 24; scale *= 2)
		t++;
	return t;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

uint32_t pattern_start(uint32_t seed)
{
	return (seed * 2654435761U) | 1;
}

uint8_t pattern_next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return (uint8_t)(*x >> 24);
}

void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = pattern_start(seed);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pattern_next(&x);
}

void *zalloc(size_t len)
{
	size_t total = (len + 4095) & ~(size_t)4095;
	void *p = NULL;

	if (posix_memalign(&p, 4096, total ? total : 4096)) {
		failf("out of memory (%zu bytes)", len);
		return NULL;
	}
	memset(p, 0, total);
	return p;
}

/* ---- devices ---------------------------------------------------------- */

static int tdev_setup(struct test_dev *d, struct ibv_device *dev)
{
	d->ctx = ibv_open_device(dev);
	if (!d->ctx) {
		fprintf(stderr, "ibv_open_device(%s): %s\n", d->name,
			strerror(errno));
		return KSFT_FAIL;
	}
	if (ibv_query_device(d->ctx, &d->attr)) {
		fprintf(stderr, "ibv_query_device(%s): %s\n", d->name,
			strerror(errno));
		return KSFT_FAIL;
	}
	/* tests compare counters around transfers of a few ms */
	counters_uncached(d->name);
	if (d->gidx < 0)
		d->gidx = find_v4_gid(d->ctx);
	if (d->gidx < 0 || ibv_query_gid(d->ctx, 1, d->gidx, &d->gid)) {
		fprintf(stderr, "%s: no usable RoCE v2 GID\n", d->name);
		return KSFT_FAIL;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		fprintf(stderr, "ibv_alloc_pd(%s): %s\n", d->name,
			strerror(errno));
		return KSFT_FAIL;
	}
	return 0;
}

struct ibv_device *dev_find(struct ibv_device **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

int tdev_open(struct test_dev *d)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev = dev_find(list, d->name);
	int ret = KSFT_SKIP;

	if (dev)
		ret = tdev_setup(d, dev);
	else
		fprintf(stderr, "device %s not found\n", d->name);
	if (list)
		ibv_free_device_list(list);
	return ret;
}

void tdev_close(struct test_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->pd = NULL;
	d->ctx = NULL;
}

int tdev_open_pair(struct test_dev d[2])
{
	int rc = tdev_open(&d[0]);

	return rc ? rc : tdev_open(&d[1]);
}

int tap_skip_all(unsigned int n, int rc, const struct test_dev d[2])
{
	unsigned int i;

	printf("# devices not usable: %s %s\n", d[0].name, d[1].name);
	for (i = 1; i <= n; i++)
		printf("%s %u - # SKIP devices not usable\n",
		       rc == KSFT_SKIP ? "ok" : "not ok", i);
	return rc;
}

int tdev_main_open(struct test_dev *d, int argc, char **argv, unsigned int n)
{
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return KSFT_FAIL;
	}
	d->name = argv[1];
	d->gidx = -1;
	printf("TAP version 13\n1..%u\n", n);
	rc = tdev_open(d);
	if (rc)
		tap_skip_all(n, rc, (struct test_dev[2]){ *d, *d });
	return rc;
}

int find_gid_prefix(struct ibv_context *ctx, const uint8_t *pfx, size_t len)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e.gid.raw, pfx, len))
			return i;
	}
	return -1;
}

int find_v4_gid(struct ibv_context *ctx)
{
	static const uint8_t v4pfx[12] = { [10] = 0xff, [11] = 0xff };

	return find_gid_prefix(ctx, v4pfx, sizeof(v4pfx));
}

int gid_of_addr(union ibv_gid *gid, const char *addr)
{
	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET6, addr, gid->raw) == 1)
		return 0;
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	return inet_pton(AF_INET, addr, &gid->raw[12]) == 1 ? 0 : -1;
}

/* ---- QPs ---------------------------------------------------------------- */

int ud_to_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = qkey,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

const char *st_str(int st)
{
	return ibv_wc_status_str((enum ibv_wc_status)st);
}

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

int rc_attr(struct ibv_qp_attr *a, enum ibv_qp_state to,
	    const struct rc_path *p)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	switch (to) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		a->qp_access_flags = p->access;
		return QP_INIT_MASK;
	case IBV_QPS_RTR:
		a->path_mtu = p->mtu;
		a->dest_qp_num = p->dest_qpn;
		a->rq_psn = p->rq_psn;
		a->max_dest_rd_atomic = p->rd_atomic;
		a->min_rnr_timer = p->min_rnr_timer;
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = p->dgid;
		a->ah_attr.grh.sgid_index = (uint8_t)p->sgid_index;
		a->ah_attr.grh.hop_limit = 64;
		a->ah_attr.port_num = 1;
		return QP_RTR_MASK;
	case IBV_QPS_RTS:
		a->timeout = p->timeout;
		a->retry_cnt = p->retry_cnt;
		a->rnr_retry = p->rnr_retry;
		a->sq_psn = p->sq_psn;
		a->max_rd_atomic = p->rd_atomic;
		return QP_RTS_MASK;
	default:
		return 0;
	}
}

int rc_modify(struct ibv_qp *qp, enum ibv_qp_state to,
	      const struct rc_path *p)
{
	struct ibv_qp_attr a;
	int mask = rc_attr(&a, to, p);

	return ibv_modify_qp(qp, &a, mask);
}

static const enum ibv_qp_state rc_steps[] = {
	IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS
};

int rc_connect(struct ibv_qp *qp, const struct rc_path *p,
	       enum ibv_qp_state *at)
{
	unsigned int k;
	int ret;

	for (k = 0; k < ARRAY_SIZE(rc_steps); k++) {
		ret = rc_modify(qp, rc_steps[k], p);
		if (ret) {
			if (at)
				*at = rc_steps[k];
			return ret;
		}
	}
	return 0;
}

int rc_connect_pair(struct ibv_qp *const qp[2], const struct rc_path path[2],
		    int *side, enum ibv_qp_state *at)
{
	unsigned int k;
	int i, ret;

	for (k = 0; k < ARRAY_SIZE(rc_steps); k++) {
		for (i = 0; i < 2; i++) {
			ret = rc_modify(qp[i], rc_steps[k], &path[i]);
			if (ret) {
				*side = i;
				*at = rc_steps[k];
				return ret;
			}
		}
	}
	return 0;
}

int rc_pair_connect(const struct test_dev d[2], struct ibv_qp *const qp[2],
		    uint32_t psn, enum ibv_mtu mtu)
{
	struct rc_path path[2];
	enum ibv_qp_state at;
	int s, side, ret;

	for (s = 0; s < 2; s++)
		path[s] = (struct rc_path){
			.access = QP_ACC_ALL,
			.mtu = mtu,
			.dest_qpn = qp[!s]->qp_num,
			.rq_psn = psn + !s,
			.sq_psn = psn + s,
			.dgid = d[!s].gid,
			.sgid_index = d[s].gidx,
			.rd_atomic = 4,
			.min_rnr_timer = 12,
			/* 67 ms, stretched on a slow kernel */
			.timeout = scaled_timeout(14),
			.retry_cnt = 7,
			.rnr_retry = 7,
		};
	ret = rc_connect_pair(qp, path, &side, &at);
	if (ret)
		failf("connecting the RC pair failed at state %d on %s: %s", at,
		      d[side].name, strerror(ret));
	return ret ? -1 : 0;
}

int hold_until_killed(int n)
{
	printf("holding %d\n", n);
	fflush(stdout);
	pause();
	return KSFT_PASS;
}

void qps_destroy(struct ibv_qp *const *qp, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (qp[i] && ibv_destroy_qp(qp[i]))
			failf("destroying QP %d failed", i);
}

void mr_dereg(struct ibv_mr *mr)
{
	if (mr && ibv_dereg_mr(mr))
		failf("ibv_dereg_mr: %s", strerror(errno));
}

/* ibv_create_qp_ex() of @ia with the ibv_wr_* operations @send_ops */
static struct ibv_qp *qp_create_ex(const struct test_dev *d,
				   struct ibv_qp_init_attr *ia,
				   uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex ix = {
		.qp_context = ia->qp_context,
		.send_cq = ia->send_cq,
		.recv_cq = ia->recv_cq,
		.cap = ia->cap,
		.qp_type = ia->qp_type,
		.sq_sig_all = ia->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = d->pd,
		.send_ops_flags = send_ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(d->ctx, &ix);

	if (qp)
		ia->cap = ix.cap;
	return qp;
}

struct ibv_qp *qp_create(const struct test_dev *d, struct qp_spec *spec,
			 struct ibv_cq **scq, struct ibv_cq **rcq)
{
	struct ibv_qp_init_attr ia = {};
	struct ibv_qp *qp;

	*scq = ibv_create_cq(d->ctx, spec->scq_depth, NULL, NULL, 0);
	if (*scq && spec->rcq_depth)
		*rcq = ibv_create_cq(d->ctx, spec->rcq_depth, NULL, NULL, 0);
	if (!*scq || (spec->rcq_depth && !*rcq)) {
		failf("ibv_create_cq(%d) on %s: %s",
		      *scq ? spec->rcq_depth : spec->scq_depth, d->name,
		      strerror(errno));
		return NULL;
	}
	ia.send_cq = *scq;
	ia.recv_cq = spec->rcq_depth ? *rcq : *scq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = spec->sig_all;
	ia.cap = spec->cap;
	qp = spec->send_ops ? qp_create_ex(d, &ia, spec->send_ops) :
	     ibv_create_qp(d->pd, &ia);
	if (!qp) {
		failf("ibv_create_qp(%u send, %u recv WRs) on %s: %s",
		      spec->cap.max_send_wr, spec->cap.max_recv_wr, d->name,
		      strerror(errno));
		return NULL;
	}
	spec->got = ia.cap;
	return qp;
}

struct qp_spec qp_spec_simple(int cq_depth, uint32_t wr)
{
	struct qp_spec spec = { .scq_depth = cq_depth };

	spec.cap.max_send_wr = wr;
	spec.cap.max_recv_wr = wr;
	spec.cap.max_send_sge = 1;
	spec.cap.max_recv_sge = 1;
	return spec;
}

int qp_pair_create(const struct test_dev d[2], struct qp_spec *spec,
		   struct ibv_qp *qp[2], struct ibv_cq *cq[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		qp[i] = qp_create(&d[i], spec, &cq[i], NULL);
		if (!qp[i])
			return -1;
	}
	return 0;
}

void qp_cqs_destroy(struct ibv_qp *qp, struct ibv_cq *scq,
		    struct ibv_cq *rcq, const char *dev)
{
	if (qp && ibv_destroy_qp(qp))
		failf("ibv_destroy_qp on %s: %s", dev, strerror(errno));
	if (scq && ibv_destroy_cq(scq))
		failf("ibv_destroy_cq: %s", strerror(errno));
	if (rcq && ibv_destroy_cq(rcq))
		failf("ibv_destroy_cq: %s", strerror(errno));
}

/* ---- work requests and completions ------------------------------------ */

int post_send1(struct ibv_qp *qp, const struct send_args *a)
{
	struct ibv_send_wr wr = {}, *bad = NULL;

	wr.wr_id = a->wr_id;
	wr.opcode = a->op;
	wr.sg_list = a->sg;
	wr.num_sge = a->nsge;
	wr.send_flags = a->flags;
	wr.imm_data = htonl(a->imm);
	if (a->op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    a->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = a->raddr;
		wr.wr.atomic.rkey = a->rkey;
		wr.wr.atomic.compare_add = a->cmp_add;
		wr.wr.atomic.swap = a->swap;
	} else {
		wr.wr.rdma.remote_addr = a->raddr;
		wr.wr.rdma.rkey = a->rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

int post_recv1(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id,
	       struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr wr = {}, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	if (srq)
		return ibv_post_srq_recv(srq, &wr, &bad);
	return ibv_post_recv(qp, &wr, &bad);
}

int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	double end = now_ms() + ms;
	int got = 0, idle = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0) {
			failf("ibv_poll_cq returned %d", r);
			return -1;
		}
		if (r) {
			got += r;
			idle = 0;
			continue;
		}
		if (now_ms() > end)
			break;
		if (++idle > 64) {
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
	return got;
}

/* ---- counters ------------------------------------------------------------ */

#define HW_COUNTERS	"/sys/class/infiniband/%s/ports/1/hw_counters"

void counters_uncached(const char *dev)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), HW_COUNTERS "/lifespan", dev);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs("0\n", f);
	fclose(f);
}

void counters_next_jiffy(void)
{
	sleep_ms(11);
}

bool ctr_read(const char *dev, const char *name, unsigned long long *v)
{
	char path[320];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), HW_COUNTERS "/%s", dev, name);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fscanf(f, "%llu", v);
	fclose(f);
	return n == 1;
}

void ctrs_read(const char *dev, struct ctrs *c)
{
	char path[320];
	struct dirent *de;
	DIR *d;

	c->n = 0;
	snprintf(path, sizeof(path), HW_COUNTERS, dev);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && c->n < MAX_CTRS) {
		if (de->d_name[0] == '.' ||
		    strlen(de->d_name) >= sizeof(c->name[0]))
			continue;
		if (ctr_read(dev, de->d_name, &c->v[c->n]))
			strcpy(c->name[c->n++], de->d_name);
	}
	closedir(d);
}

unsigned long long ctrs_get(const struct ctrs *c, const char *name)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name))
			return c->v[i];
	return 0;
}

void ctrs_diag(const char *dev, const struct ctrs *before)
{
	struct ctrs now;
	char line[2048];
	size_t used;
	int i;

	ctrs_read(dev, &now);
	used = snprintf(line, sizeof(line), "counters %s:", dev);
	for (i = 0; i < now.n; i++) {
		unsigned long long old = ctrs_get(before, now.name[i]);

		if (strstr(now.name[i], "hwm") ||
		    !strcmp(now.name[i], "lifespan") || now.v[i] == old ||
		    used >= sizeof(line))
			continue;
		used += snprintf(line + used, sizeof(line) - used, " %s+%llu",
				 now.name[i], now.v[i] - old);
	}
	diag("%s", line);
}

long fault_get(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), FAULT_DIR "/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

bool fault_set(const char *name, long v)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), FAULT_DIR "/%s", name);
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok;
}

bool fault_arm(int at, long after, unsigned int ms)
{
	return fault_set("rkey_hold_at", at) &&
	       fault_set("rkey_hold_after", after) &&
	       fault_set("rkey_hold_ms", ms) &&
	       fault_set("rkey_hold_arm", 1);
}

bool fault_available(void)
{
	return fault_get("rkey_holds") >= 0;
}

int run_with_watchers(void *(*watch)(void *), int (*act)(void *), void *arg)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
	bool started[2] = { false, false };
	pthread_attr_t attr;
	pthread_t t[2];
	cpu_set_t set;
	int c, ret;

	for (c = 0; c < ncpu; c++) {
		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(c, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		started[c] = !pthread_create(&t[c], &attr, watch, arg);
		pthread_attr_destroy(&attr);
	}
	ret = act(arg);
	for (c = 0; c < ncpu; c++)
		if (started[c])
			pthread_join(t[c], NULL);
	return ret;
}

bool hold_claim(int *claimed, long holds0, int ms)
{
	double end = now_ms() + ms;
	int idle = 0;

	while (!__atomic_load_n(claimed, __ATOMIC_ACQUIRE) && now_ms() < end)
		if (fault_get("rkey_holds") > holds0)
			return __atomic_compare_exchange_n(claimed, &idle, 1,
							   false,
							   __ATOMIC_ACQ_REL,
							   __ATOMIC_ACQUIRE);
	return false;
}
