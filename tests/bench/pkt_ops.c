// SPDX-License-Identifier: GPL-2.0
/*
 * pkt_ops: per-packet costs of the pure code of kernel/mech/ in this
 * machine, in nanoseconds per operation, measured in user space with the
 * module's own sources:
 *
 *   hdr_build  shca_hdr_build() of an RC SEND_FIRST header (BTH) and of
 *          an RC RDMA_WRITE_FIRST header (BTH + RETH), alternately, the
 *          PSN advancing by one each time
 *   hdr_parse  shca_hdr_parse() of those two packets (with a 4096-byte
 *          payload and the ICRC in the length), alternately
 *   llq    shca_llq_push() of a ready entry + shca_llq_pop_ready(), the
 *          receive LLQ's pattern (kernel/engine/shca_rx.c), on an LLQ of
 *          4096 entries where 64 QPs have 8 packets queued each: pushes go
 *          round robin over the QPs, pops serve the ready lists round
 *          robin, so no list empties and none is created
 *   txhist  shca_txhist_push() + shca_txhist_built(all) +
 *          shca_txhist_retire() of a one-packet message on a history of
 *          256 records with 128 messages in flight: each acknowledgement
 *          retires the oldest record (a record retires only once built,
 *          so the built() call of shca_req_send_one() is counted)
 *   keytab  shca_keytab_lookup() of a valid key, in a table of 65536 keys
 *          of which 49152 are allocated (1 MiB of slots), the keys taken
 *          in a pseudo-random order from an array read in sequence
 *   per_packet  hdr_build + hdr_parse + llq + txhist
 *
 *   pkt_ops [-r ROUNDS]
 *
 * Each is run in batches of 4096 operations until at least 50 ms have
 * passed, ROUNDS times (default 3); the best round is printed:
 *
 *   pkt_ops hdr_build_ns=... hdr_parse_ns=... llq_ns=... txhist_ns=...
 *           keytab_ns=... per_packet_ns=...
 *
 * The times include the loop around each call (a counter, the next PSN,
 * sequence number or key), not the setup: memory, init, filling the LLQ,
 * the history and the key table.  Consecutive operations do not depend on
 * each other, so the CPU may overlap them: this is throughput, not
 * latency.  Build with kernel/mech/{shca_hdr,shca_llq,shca_txhist,
 * shca_keytab}.c and -Ikernel/mech.  Exits 0, or 1 on bad arguments,
 * when memory cannot be had, or when a result is wrong (checked before
 * and after the timing: parse gives what build wrote, pops give what was
 * pushed in order, retire gives the record pushed, lookup finds the key).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "shca_hdr.h"
#include "shca_keytab.h"
#include "shca_llq.h"
#include "shca_txhist.h"

#define MAX_ROUNDS	100
#define ROUND_S		0.05
#define BATCH		4096	/* operations between two clock readings */

#define PAYLOAD		4096	/* MTU: the payload of a FIRST packet */
#define WIRE_LEN	(SHCA_MAX_HDR_LEN + PAYLOAD + SHCA_ICRC_LEN)

#define LLQ_ENTRIES	4096
#define LLQ_FUNCS	16	/* SHCA_MAX_FUNCS */
#define LLQ_INDEX	(1024 + LLQ_FUNCS)	/* QPNs and the GSI QPs */
#define LLQ_QPS		64	/* QPs with packets queued, a power of 2 */
#define LLQ_DEPTH	8	/* packets queued on each */

#define TXH_CAP		256	/* SHCA_TXHIST_DEPTH */
#define TXH_INFLIGHT	128	/* messages sent and not acknowledged */
#define TXH_BATCH	8	/* SHCA_RETIRE_BATCH */
#define TXH_PSN0	(SHCA_PSN_MASK - 63)	/* the checks cross the wrap */

#define KT_CAP		65536
#define KT_LIVE		(KT_CAP / 4 * 3)

struct bench {
	/* headers: [0] SEND_FIRST, [1] RDMA_WRITE_FIRST */
	struct shca_pkt_hdr hdr[2];
	u8 wire[2][WIRE_LEN];
	size_t wire_len[2];
	u8 out[SHCA_MAX_HDR_LEN];
	u32 psn;

	struct shca_llq llq;
	void *llq_mem;
	u64 llq_seq;		/* sequence number of the next push */
	u64 llq_popped;		/* the one the next pop must give */

	struct shca_txhist th;
	struct shca_txhist_rec *th_mem;
	u32 th_psn;		/* first PSN of the next message */
	u32 th_wqe;		/* WQE index of the next message */

	struct shca_keytab kt;
	void *kt_mem;
	u8 *owners;		/* key i's owner is &owners[i] */
	u32 *keys;		/* KT_LIVE valid keys, shuffled */
	u32 *key_owner;		/* the owner index of keys[i] */
	u32 kt_next;
};

static volatile u64 sink;

static int fail(const char *what)
{
	fprintf(stderr, "pkt_ops: %s\n", what);
	return -1;
}

/* xorshift64: the pseudo-random order of the keys */
static u64 rnd(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* --- headers --- */

static void hdr_setup(struct bench *b)
{
	struct shca_pkt_hdr *h;
	int i;

	for (i = 0; i < 2; i++) {
		h = &b->hdr[i];
		memset(h, 0, sizeof(*h));
		h->opcode = SHCA_OPCODE(SHCA_OP_RC,
					i ? SHCA_OP_RDMA_WRITE_FIRST :
					    SHCA_OP_SEND_FIRST);
		h->pkey = 0xffff;
		h->dest_qpn = 0x000123 + i;
		h->psn = 0x00abcd + i;
		if (i) {
			h->reth.va = 0x00007f3a12345000ULL;
			h->reth.rkey = 0x00012e01;
			h->reth.dma_len = 16 * PAYLOAD;
		}
		b->wire_len[i] = shca_opcode_info(h->opcode)->hdr_len +
				 PAYLOAD + SHCA_ICRC_LEN;
	}
	b->psn = 0x00abcd;
}

/* the fields the bench sets came back (parse zeroes the others) */
static bool hdr_equal(const struct shca_pkt_hdr *a,
		      const struct shca_pkt_hdr *b)
{
	return a->opcode == b->opcode && a->dest_qpn == b->dest_qpn &&
	       a->psn == b->psn && a->ack_req == b->ack_req &&
	       a->pkey == b->pkey && a->pad_count == b->pad_count &&
	       !memcmp(&a->reth, &b->reth, sizeof(a->reth));
}

/* Build both packets into b->wire and parse them back. */
static int hdr_check(struct bench *b)
{
	struct shca_pkt_hdr h;
	int i, want;

	for (i = 0; i < 2; i++) {
		want = shca_opcode_info(b->hdr[i].opcode)->hdr_len;
		memset(b->wire[i], 0x5a, WIRE_LEN);
		if (shca_hdr_build(b->wire[i], WIRE_LEN, &b->hdr[i]) != want)
			return fail("shca_hdr_build() gave a wrong length");
		if (shca_hdr_parse(b->wire[i], b->wire_len[i], &h) != want)
			return fail("shca_hdr_parse() gave a wrong length");
		if (!hdr_equal(&h, &b->hdr[i]))
			return fail("shca_hdr_parse() did not give what shca_hdr_build() wrote");
	}
	return 0;
}

static u64 run_build(struct bench *b, u32 n)
{
	struct shca_pkt_hdr *h;
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		h = &b->hdr[i & 1];
		h->psn = b->psn;
		b->psn = shca_psn_add(b->psn, 1);
		sum += shca_hdr_build(b->out, sizeof(b->out), h);
	}
	return sum + b->out[11];
}

static u64 run_parse(struct bench *b, u32 n)
{
	struct shca_pkt_hdr h;
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		sum += shca_hdr_parse(b->wire[i & 1], b->wire_len[i & 1], &h);
		sum += h.psn;
	}
	return sum;
}

/* --- linked-list queue --- */

static u32 llq_index(u32 qp)
{
	return 1 + qp * 16;
}

static u32 llq_func(u32 qp)
{
	return qp & 3;
}

/* One packet in, one out; 0 or the first error. */
static inline int llq_step(struct bench *b, u32 *idx,
			   struct shca_llq_payload *p)
{
	u64 seq = b->llq_seq++;
	u32 qp = seq & (LLQ_QPS - 1);
	int ret;

	p->w[0] = seq;
	p->w[1] = llq_index(qp);
	ret = shca_llq_push(&b->llq, llq_index(qp), llq_func(qp), p, true);
	if (ret < 0)
		return ret;
	return shca_llq_pop_ready(&b->llq, idx, p);
}

/*
 * The steady state: the queue serves the QPs in the order they were
 * pushed to, so the n-th pop gives sequence number n, from its own QP.
 */
static int llq_check_steady(struct bench *b, u32 n)
{
	struct shca_llq_payload p;
	u32 i, idx = 0;

	for (i = 0; i < n; i++) {
		if (llq_step(b, &idx, &p))
			return fail("shca_llq_push() or shca_llq_pop_ready() failed");
		if (p.w[0] != b->llq_popped++ || idx != p.w[1] ||
		    idx != llq_index(p.w[0] & (LLQ_QPS - 1)))
			return fail("shca_llq_pop_ready() did not give what was pushed");
	}
	return 0;
}

static int llq_setup(struct bench *b)
{
	const struct shca_llq_cfg cfg = {
		.n_entries = LLQ_ENTRIES,
		.n_lists = LLQ_ENTRIES,
		.n_index = LLQ_INDEX,
		.n_funcs = LLQ_FUNCS,
	};
	struct shca_llq_payload p = { .w = { 0x1122334455667788ULL, 42 } };
	struct shca_llq_payload q;
	size_t size = shca_llq_mem_size(&cfg);
	u32 idx = 0, i;

	b->llq_mem = size ? malloc(size) : NULL;
	if (!b->llq_mem)
		return fail("cannot allocate the LLQ");
	if (shca_llq_init(&b->llq, &cfg, b->llq_mem))
		return fail("shca_llq_init() failed");

	/* one entry through an empty queue */
	if (shca_llq_push(&b->llq, 77, 1, &p, true) < 0 ||
	    shca_llq_pop_ready(&b->llq, &idx, &q) || idx != 77 ||
	    memcmp(&p, &q, sizeof(p)) || !shca_llq_empty(&b->llq))
		return fail("shca_llq_pop_ready() did not give what was pushed");

	for (i = 0; i < LLQ_QPS * LLQ_DEPTH; i++) {
		p.w[0] = b->llq_seq;
		p.w[1] = llq_index(b->llq_seq & (LLQ_QPS - 1));
		if (shca_llq_push(&b->llq, p.w[1],
				  llq_func(b->llq_seq & (LLQ_QPS - 1)), &p,
				  true) < 0)
			return fail("shca_llq_push() failed while filling");
		b->llq_seq++;
	}
	return llq_check_steady(b, 2 * LLQ_ENTRIES);
}

static int llq_check_end(struct bench *b)
{
	const struct shca_llq_stats *st = shca_llq_stats(&b->llq);
	u32 i;

	if (llq_check_steady(b, 2 * LLQ_ENTRIES))
		return -1;
	for (i = 0; i < SHCA_LLQ_REFUSE_NR; i++)
		if (st->refused[i])
			return fail("shca_llq_push() refused an entry");
	if (shca_llq_check(&b->llq) || st->invalid ||
	    st->entries_used != LLQ_QPS * LLQ_DEPTH ||
	    st->lists_used != LLQ_QPS || st->pushes != st->pops + LLQ_QPS *
	    LLQ_DEPTH)
		return fail("the LLQ is not in the state it should be");
	return 0;
}

static u64 run_llq(struct bench *b, u32 n)
{
	struct shca_llq_payload p;
	u64 sum = 0;
	u32 i, idx = 0;

	for (i = 0; i < n; i++) {
		sum += llq_step(b, &idx, &p);
		sum += p.w[0] + idx;
	}
	b->llq_popped += n;
	return sum;
}

/* --- transmit history --- */

/* One message of one packet sent, the oldest acknowledged. */
static inline int txh_step(struct bench *b, struct shca_txhist_rec *out,
			   int *err)
{
	struct shca_txhist_rec r = {
		.length = PAYLOAD,
		.mtu = PAYLOAD,
		.opcode = 0,	/* IB_WR_RDMA_WRITE; opaque to the history */
		.flags = SHCA_TXH_F_SIGNALED,
	};
	u32 id = 0;

	r.wqe = b->th_wqe++;
	r.first_psn = b->th_psn;
	r.last_psn = b->th_psn;
	b->th_psn = shca_psn_add(b->th_psn, 1);
	*err = shca_txhist_push(&b->th, &r, &id);
	*err |= shca_txhist_built(&b->th, id, PAYLOAD, true);
	return shca_txhist_retire(&b->th,
				  (r.first_psn - TXH_INFLIGHT) & SHCA_PSN_MASK,
				  0, out, TXH_BATCH);
}

/* Each step retires the record pushed TXH_INFLIGHT steps before. */
static int txh_check_steady(struct bench *b, u32 n)
{
	struct shca_txhist_rec out[TXH_BATCH];
	u32 i, wqe;
	int err;

	for (i = 0; i < n; i++) {
		wqe = b->th_wqe - TXH_INFLIGHT;
		if (txh_step(b, out, &err) != 1 || err)
			return fail("shca_txhist_push(), _built() or _retire() failed");
		if (out[0].wqe != wqe || out[0].msn != (wqe & SHCA_MSN_MASK) ||
		    out[0].first_psn != ((TXH_PSN0 + wqe) & SHCA_PSN_MASK) ||
		    out[0].length != PAYLOAD ||
		    !(out[0].flags & SHCA_TXH_F_BUILT) ||
		    shca_txhist_count(&b->th) != TXH_INFLIGHT)
			return fail("shca_txhist_retire() did not give the record pushed");
	}
	return 0;
}

static int txh_setup(struct bench *b)
{
	struct shca_txhist_rec r = {
		.length = PAYLOAD, .mtu = PAYLOAD,
		.flags = SHCA_TXH_F_SIGNALED,
	};
	u32 i, id;

	b->th_mem = calloc(TXH_CAP, sizeof(*b->th_mem));
	if (!b->th_mem)
		return fail("cannot allocate the transmit history");
	if (shca_txhist_init(&b->th, b->th_mem, TXH_CAP))
		return fail("shca_txhist_init() failed");
	b->th_psn = TXH_PSN0;
	for (i = 0; i < TXH_INFLIGHT; i++) {
		r.wqe = b->th_wqe++;
		r.first_psn = b->th_psn;
		r.last_psn = b->th_psn;
		b->th_psn = shca_psn_add(b->th_psn, 1);
		if (shca_txhist_push(&b->th, &r, &id) || id != i ||
		    shca_txhist_built(&b->th, id, PAYLOAD, true))
			return fail("shca_txhist_push() failed while filling");
	}
	return txh_check_steady(b, 2 * TXH_CAP);
}

static int txh_check_end(struct bench *b)
{
	const struct shca_txhist_stats *st = &b->th.stats;

	if (txh_check_steady(b, 2 * TXH_CAP))
		return -1;
	if (shca_txhist_check(&b->th) || st->refused || st->invalid ||
	    st->corrupt || st->pushed != st->retired + TXH_INFLIGHT)
		return fail("the transmit history is not in the state it should be");
	return 0;
}

static u64 run_txhist(struct bench *b, u32 n)
{
	struct shca_txhist_rec out[TXH_BATCH];
	u64 sum = 0;
	u32 i;
	int err;

	memset(out, 0, sizeof(out));
	for (i = 0; i < n; i++) {
		sum += txh_step(b, out, &err);
		sum += out[0].wqe + err;
	}
	return sum;
}

/* --- key table --- */

static int kt_setup(struct bench *b)
{
	size_t size = shca_keytab_mem_size(KT_CAP);
	u32 *all, *perm, i, j, t;
	u64 s = 0x9e3779b97f4a7c15ULL;

	b->kt_mem = size ? malloc(size) : NULL;
	b->owners = malloc(KT_CAP);
	b->keys = malloc(KT_LIVE * sizeof(*b->keys));
	b->key_owner = malloc(KT_LIVE * sizeof(*b->key_owner));
	all = malloc(KT_CAP * sizeof(*all));
	perm = malloc(KT_CAP * sizeof(*perm));
	if (!b->kt_mem || !b->owners || !b->keys || !b->key_owner || !all ||
	    !perm) {
		free(all);
		free(perm);
		return fail("cannot allocate the key table");
	}
	if (shca_keytab_init(&b->kt, KT_CAP, b->kt_mem))
		goto bad;
	for (i = 0; i < KT_CAP; i++) {
		if (shca_keytab_alloc(&b->kt, &b->owners[i], &all[i]))
			goto bad;
		perm[i] = i;
	}
	for (i = KT_CAP - 1; i > 0; i--) {
		j = rnd(&s) % (i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	/* free a random quarter, look the rest up in random order */
	for (i = 0; i < KT_CAP - KT_LIVE; i++)
		if (shca_keytab_free(&b->kt, all[perm[KT_LIVE + i]]))
			goto bad;
	for (i = 0; i < KT_LIVE; i++) {
		b->keys[i] = all[perm[i]];
		b->key_owner[i] = perm[i];
	}
	if (shca_keytab_check(&b->kt) || b->kt.used != KT_LIVE ||
	    shca_keytab_lookup(&b->kt, all[perm[KT_LIVE]]))
		goto bad;
	free(all);
	free(perm);
	return 0;
bad:
	free(all);
	free(perm);
	return fail("the key table could not be set up");
}

/* Every live key names its owner; one generation off names nothing. */
static int kt_check(struct bench *b)
{
	u32 i, key;

	for (i = 0; i < KT_LIVE; i++) {
		key = b->keys[i];
		if (shca_keytab_lookup(&b->kt, key) !=
		    &b->owners[b->key_owner[i]])
			return fail("shca_keytab_lookup() did not find a key");
		key = shca_key_make(shca_key_index(key), shca_key_gen(key) + 1);
		if (shca_keytab_lookup(&b->kt, key))
			return fail("shca_keytab_lookup() found a stale key");
	}
	return 0;
}

static u64 run_keytab(struct bench *b, u32 n)
{
	u32 i, k = b->kt_next;
	u64 sum = 0;

	for (i = 0; i < n; i++) {
		sum += (uintptr_t)shca_keytab_lookup(&b->kt, b->keys[k]);
		k = k + 1 == KT_LIVE ? 0 : k + 1;
	}
	b->kt_next = k;
	return sum;
}

/* --- timing --- */

typedef u64 (*run_fn)(struct bench *b, u32 n);

/* Best time of @rounds rounds of @fn, in ns per operation. */
static double measure(run_fn fn, struct bench *b, long rounds)
{
	double best = 0, t0, dt, ns;
	u64 n, sum = 0;
	long r;

	for (r = 0; r < rounds; r++) {
		n = 0;
		t0 = bench_now();
		do {
			sum += fn(b, BATCH);
			n += BATCH;
			dt = bench_now() - t0;
		} while (dt < ROUND_S);
		ns = dt * 1e9 / n;
		if (!r || ns < best)
			best = ns;
	}
	sink += sum;
	return best;
}

static void bench_free(struct bench *b)
{
	free(b->llq_mem);
	free(b->th_mem);
	free(b->kt_mem);
	free(b->owners);
	free(b->keys);
	free(b->key_owner);
	free(b);
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: pkt_ops [-r ROUNDS]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	long rounds = 3;
	const struct bench_opt opts[] = {
		{ 'r', 1, MAX_ROUNDS, &rounds },
	};
	double build, parse, llq, txh, kt;
	struct bench *b;
	int ret = 1;

	if (bench_getopt(argc, argv, opts, ARRAY_SIZE(opts)))
		bad_usage();
	b = calloc(1, sizeof(*b));
	if (!b) {
		fail("cannot allocate memory");
		return 1;
	}
	hdr_setup(b);
	if (hdr_check(b) || llq_setup(b) || txh_setup(b) || kt_setup(b) ||
	    kt_check(b))
		goto out;

	build = measure(run_build, b, rounds);
	parse = measure(run_parse, b, rounds);
	llq = measure(run_llq, b, rounds);
	txh = measure(run_txhist, b, rounds);
	kt = measure(run_keytab, b, rounds);

	if (hdr_check(b) || llq_check_end(b) || txh_check_end(b) ||
	    kt_check(b))
		goto out;
	printf("pkt_ops hdr_build_ns=%.1f hdr_parse_ns=%.1f llq_ns=%.1f",
	       build, parse, llq);
	printf(" txhist_ns=%.1f keytab_ns=%.1f per_packet_ns=%.1f\n",
	       txh, kt, build + parse + llq + txh);
	ret = 0;
out:
	bench_free(b);
	return ret;
}
