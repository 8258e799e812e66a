// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the transmit history (kernel/mech/shca_txhist.c): every
 * operation and error, full and empty, PSN wrap at 2^24, id wrap at 2^31,
 * replay from the middle of a message cut with an MTU other than the
 * current one, partial and whole retirement, corruption detection, and a
 * model-based random test against a plain array.
 */
/* unit-sources: shca_txhist.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "shca_txhist.h"

#define PSN_MASK	0xffffffu

static struct shca_txhist_rec mk(u32 wqe, u32 psn, u32 len, u32 mtu,
				 u8 flags)
{
	struct shca_txhist_rec r = {
		.wqe = wqe, .first_psn = psn & PSN_MASK, .length = len,
		.mtu = (u16)mtu, .opcode = (u8)(wqe & 0xff), .flags = flags,
	};

	r.last_psn = (psn + shca_txhist_npkts(len, mtu) - 1) & PSN_MASK;
	return r;
}

/* History of @cap records in memory poisoned first. */
static struct shca_txhist_rec *hist_new(struct shca_txhist *h, u32 cap)
{
	struct shca_txhist_rec *mem = malloc(cap * sizeof(*mem));

	if (!mem)
		tap_bail("out of memory");
	memset(mem, 0x5a, cap * sizeof(*mem));
	memset(h, 0x5a, sizeof(*h));
	if (shca_txhist_init(h, mem, cap))
		tap_bail("shca_txhist_init failed");
	return mem;
}

static void test_init(void)
{
	struct shca_txhist_rec mem[4];
	struct shca_txhist h;
	u32 id;

	ok_eq(shca_txhist_init(NULL, mem, 4), SHCA_TXH_EINVAL, "init: NULL history");
	ok_eq(shca_txhist_init(&h, NULL, 4), SHCA_TXH_EINVAL, "init: NULL memory");
	ok_eq(shca_txhist_init(&h, mem, 0), SHCA_TXH_EINVAL, "init: capacity 0");
	ok_eq(shca_txhist_init(&h, mem, SHCA_TXH_MAX_CAP + 1), SHCA_TXH_EINVAL,
	      "init: capacity above the maximum");
	memset(&h, 0xff, sizeof(h));
	ok_eq(shca_txhist_init(&h, mem, 4), 0, "init: capacity 4");
	ok(shca_txhist_count(&h) == 0 && !shca_txhist_full(&h) &&
	   h.msn == 0 && h.stats.pushed == 0, "init: empty, MSN 0, counters 0");
	ok_eq(shca_txhist_oldest(&h, &id), SHCA_TXH_ENOENT, "oldest of empty");
	ok_eq(shca_txhist_newest(&h, &id), SHCA_TXH_ENOENT, "newest of empty");
	ok_eq(shca_txhist_find(&h, 0, &id), SHCA_TXH_ENOENT, "find in empty");
	ok_eq(shca_txhist_pop(&h, NULL), SHCA_TXH_ENOENT, "pop of empty");
	ok_eq(shca_txhist_retire(&h, 0, SHCA_TXH_RETIRE_REPLY, NULL, 4), 0,
	      "retire from empty");
	ok(shca_txhist_get(&h, 0) == NULL, "get from empty");
	ok_eq(shca_txhist_check(&h), 0, "check of empty");
}

static void test_npkts(void)
{
	ok_eq(shca_txhist_npkts(0, 1024), 1, "npkts: empty message, 1 packet");
	ok_eq(shca_txhist_npkts(1, 1024), 1, "npkts: 1 byte");
	ok_eq(shca_txhist_npkts(1024, 1024), 1, "npkts: exactly one MTU");
	ok_eq(shca_txhist_npkts(1025, 1024), 2, "npkts: MTU + 1");
	ok_eq(shca_txhist_npkts(1u << 20, 256), 4096, "npkts: 1 MiB at 256");
	ok_eq(shca_txhist_npkts(0xffffffffu, 4096), 0x100000,
	      "npkts: 4 GiB - 1 at 4096, no overflow");
	ok_eq(shca_txhist_npkts(100, 0), 0, "npkts: MTU 0 refused");
	ok_eq(shca_txhist_npkts(100, 128), 0, "npkts: MTU 128 refused");
	ok_eq(shca_txhist_npkts(100, 1000), 0, "npkts: MTU 1000 refused");
	ok_eq(shca_txhist_npkts(100, 8192), 0, "npkts: MTU 8192 refused");
}

static void test_push(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 3), r;
	const struct shca_txhist_rec *g;
	u32 id = 99, id2;

	r = mk(7, 100, 5000, 1024, SHCA_TXH_F_SIGNALED);
	r.msn = 1234;
	r.offset = 77;
	r.flags |= SHCA_TXH_F_BUILT;
	ok_eq(shca_txhist_push(&h, &r, &id), 0, "push a 5-packet SEND");
	g = shca_txhist_get(&h, id);
	ok(g && g->wqe == 7 && g->first_psn == 100 && g->last_psn == 104 &&
	   g->length == 5000 && g->mtu == 1024 && g->opcode == 7,
	   "the record reads back");
	ok(g && g->msn == 0 && g->offset == 0 &&
	   g->flags == SHCA_TXH_F_SIGNALED,
	   "push sets MSN 0 and offset 0, clears BUILT, keeps SIGNALED");

	r = mk(8, 106, 10, 1024, 0);
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_ERANGE,
	      "push with a PSN gap refused");
	r = mk(8, 104, 10, 1024, 0);
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_ERANGE,
	      "push overlapping the newest record refused");
	r = mk(8, 105, 10, 1024, 0);
	r.last_psn = 106;
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_EINVAL,
	      "push with last PSN not matching length/MTU refused");
	r = mk(8, 105, 10, 1000, 0);
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_EINVAL,
	      "push with MTU 1000 refused");
	r = mk(8, 105, 10, 1024, SHCA_TXH_F_READ | SHCA_TXH_F_ATOMIC);
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_EINVAL,
	      "push flagged READ and ATOMIC refused");
	r = mk(8, 105, 10, 1024, 0x40);
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_EINVAL,
	      "push with an unknown flag refused");
	r = mk(8, 105, 2048, 1024, SHCA_TXH_F_ATOMIC);
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_EINVAL,
	      "ATOMIC spanning two PSNs refused");
	r = mk(8, 105, 10, 1024, 0);
	r.first_psn = 0x1000000;
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_EINVAL,
	      "first PSN above 24 bits refused");
	ok_eq(shca_txhist_push(&h, NULL, &id2), SHCA_TXH_EINVAL, "NULL record");
	r = mk(8, 105, 10, 1024, 0);
	ok_eq(shca_txhist_push(&h, &r, NULL), SHCA_TXH_EINVAL, "NULL id");
	ok_eq(h.stats.refused, 10, "every refusal counted");
	ok_eq(shca_txhist_count(&h), 1, "refusals left the history alone");

	ok_eq(shca_txhist_push(&h, &r, &id2), 0, "push a second record");
	ok_eq(id2, id + 1, "ids are consecutive");
	ok_eq(shca_txhist_get(&h, id2)->msn, 1, "second record has MSN 1");
	r = mk(9, 106, 0, 256, SHCA_TXH_F_ATOMIC);
	ok_eq(shca_txhist_push(&h, &r, &id2), 0, "push a third (ATOMIC)");
	ok(shca_txhist_full(&h), "capacity 3 reached: full");
	r = mk(10, 107, 0, 256, 0);
	ok_eq(shca_txhist_push(&h, &r, &id2), SHCA_TXH_EFULL, "push when full");
	ok_eq(h.stats.hwm, 3, "high-water mark 3");
	ok_eq(shca_txhist_check(&h), 0, "check passes");
	ok(shca_txhist_get(&h, id + 3) == NULL, "an id never pushed: NULL");
	ok(shca_txhist_get(&h, id - 1) == NULL, "an id before the oldest: NULL");
	free(mem);
}

static void test_span(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 4), r;
	u32 id;

	/* 2^22 packets at MTU 256: exactly the span limit */
	r = mk(1, 5, SHCA_TXH_MAX_SPAN * 256u, 256, SHCA_TXH_F_READ);
	ok_eq(shca_txhist_push(&h, &r, &id), 0, "READ of 2^22 PSNs fits");
	r = mk(2, (5 + SHCA_TXH_MAX_SPAN) & PSN_MASK, 8, 256, 0);
	ok_eq(shca_txhist_push(&h, &r, &id), SHCA_TXH_E2BIG,
	      "one more PSN beyond the span limit: E2BIG");
	shca_txhist_flush(&h);
	r = mk(3, 0, SHCA_TXH_MAX_SPAN * 256u + 1, 256, 0);
	ok_eq(shca_txhist_push(&h, &r, &id), SHCA_TXH_EINVAL,
	      "a single message longer than the span limit refused");
	free(mem);
}

static void test_find_wrap(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 8), r;
	u32 ids[4], id, psn, k;
	bool good = true;
	/* records around the 2^24 wrap: [fffffd..ffffff] [0] [1..4] [5] */
	static const u32 len[4] = { 2100, 0, 4000, 8 };
	static const u32 mtu[4] = { 1024, 4096, 1024, 256 };
	static const u32 first[4] = { 0xfffffd, 0x0, 0x1, 0x5 };

	for (k = 0; k < 4; k++) {
		r = mk(k, first[k], len[k], mtu[k], 0);
		if (shca_txhist_push(&h, &r, &ids[k]))
			good = false;
	}
	ok(good, "four records across the PSN wrap pushed");
	ok_eq(shca_txhist_get(&h, ids[0])->last_psn, 0xffffff,
	      "first record ends at 0xffffff");
	for (psn = 0xfffffd, k = 0; k < 9; k++, psn = (psn + 1) & PSN_MASK) {
		u32 want = psn >= 0xfffffd ? 0 : psn == 0 ? 1 : psn <= 4 ? 2 : 3;

		if (shca_txhist_find(&h, psn, &id) || id != ids[want]) {
			good = false;
			diag("find(0x%06x) wrong", psn);
		}
	}
	ok(good, "find maps every PSN across the wrap to its record");
	ok_eq(shca_txhist_find(&h, 0xfffffc, &id), SHCA_TXH_ENOENT,
	      "PSN before the oldest: not found");
	ok_eq(shca_txhist_find(&h, 6, &id), SHCA_TXH_ENOENT,
	      "PSN after the newest: not found");
	ok_eq(shca_txhist_find(&h, 0x7ffffd, &id), SHCA_TXH_ENOENT,
	      "PSN half the space away: not found");
	ok_eq(shca_txhist_find(&h, 0x1000001, &id), SHCA_TXH_ENOENT,
	      "PSN above 24 bits: not found");
	ok_eq(shca_txhist_check(&h), 0, "check passes across the wrap");
	free(mem);
}

static void test_built(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 4), r;
	const struct shca_txhist_rec *g;
	u32 id, rid, zid;

	r = mk(1, 10, 3000, 1024, 0);
	shca_txhist_push(&h, &r, &id);
	g = shca_txhist_get(&h, id);
	ok_eq(shca_txhist_frontier(g), 10, "frontier of an unbuilt record");
	ok_eq(shca_txhist_built(&h, id, 1024, false), 0, "first packet built");
	ok_eq(shca_txhist_frontier(g), 11, "frontier moves one packet");
	ok_eq(shca_txhist_built(&h, id, 1000, false), SHCA_TXH_EINVAL,
	      "offset moving back refused");
	ok_eq(shca_txhist_built(&h, id, 1500, false), SHCA_TXH_EINVAL,
	      "offset off a packet edge refused");
	ok_eq(shca_txhist_built(&h, id, 3001, true), SHCA_TXH_EINVAL,
	      "offset beyond the length refused");
	ok_eq(shca_txhist_built(&h, id, 2048, true), SHCA_TXH_EINVAL,
	      "all built short of the length refused");
	ok_eq(shca_txhist_built(&h, id + 1, 0, false), SHCA_TXH_EINVAL,
	      "a stale id refused");
	ok_eq(shca_txhist_built(&h, id, 3000, true), 0, "last packet built");
	ok(g->flags & SHCA_TXH_F_BUILT, "record marked BUILT");
	ok_eq(shca_txhist_frontier(g), 13, "frontier past the last PSN");
	ok_eq(shca_txhist_built(&h, id, 3000, false), SHCA_TXH_EINVAL,
	      "a BUILT record cannot go back");

	r = mk(2, 13, 0, 1024, 0);
	shca_txhist_push(&h, &r, &zid);
	g = shca_txhist_get(&h, zid);
	ok_eq(shca_txhist_frontier(g), 13, "empty message: frontier is its PSN");
	ok_eq(shca_txhist_built(&h, zid, 0, true), 0, "empty message built");
	ok_eq(shca_txhist_frontier(g), 14, "then past it");

	r = mk(3, 14, 9000, 4096, SHCA_TXH_F_READ);
	shca_txhist_push(&h, &r, &rid);
	ok_eq(shca_txhist_built(&h, rid, 9000, true), 0,
	      "READ request built whole");
	ok_eq(shca_txhist_frontier(shca_txhist_get(&h, rid)), 17,
	      "READ frontier past its response range");
	ok_eq(shca_txhist_check(&h), 0, "check passes");
	free(mem);
}

static void test_retire(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 8), r, out[8];
	u32 id[5], k, oid;

	/* SEND 3 pkts [0..2], WRITE 1 [3], READ 2 [4..5], SEND 1 [6],
	 * ATOMIC [7] */
	r = mk(0, 0, 2500, 1024, SHCA_TXH_F_SIGNALED);
	shca_txhist_push(&h, &r, &id[0]);
	r = mk(1, 3, 100, 1024, 0);
	shca_txhist_push(&h, &r, &id[1]);
	r = mk(2, 4, 2000, 1024, SHCA_TXH_F_READ | SHCA_TXH_F_SIGNALED);
	shca_txhist_push(&h, &r, &id[2]);
	r = mk(3, 6, 10, 1024, 0);
	shca_txhist_push(&h, &r, &id[3]);
	r = mk(4, 7, 8, 1024, SHCA_TXH_F_ATOMIC);
	shca_txhist_push(&h, &r, &id[4]);

	ok_eq(shca_txhist_retire(&h, 1, 0, out, 8), 0,
	      "ACK of a middle packet retires nothing (partial)");
	ok_eq(shca_txhist_retire(&h, 2, 0, out, 8), 0,
	      "ACK of an unbuilt record retires nothing");
	shca_txhist_built(&h, id[0], 2048, false);
	ok_eq(shca_txhist_retire(&h, 2, 0, out, 8), 0,
	      "... nor of a partly built one");
	for (k = 0; k < 5; k++)
		shca_txhist_built(&h, id[k], shca_txhist_get(&h, id[k])->length,
				  true);
	ok_eq(shca_txhist_retire(&h, 2, 0, out, 8), 1,
	      "ACK of its last PSN retires the whole message");
	ok(out[0].wqe == 0 && (out[0].flags & SHCA_TXH_F_SIGNALED) &&
	   out[0].msn == 0, "the retired record is returned");
	ok_eq(shca_txhist_retire(&h, 7, 0, out, 8), 1,
	      "ACK past a READ: stops at the READ");
	ok_eq(out[0].wqe, 1, "... after retiring the WRITE");
	ok(!shca_txhist_oldest(&h, &oid) && oid == id[2],
	   "the READ is now the oldest");
	ok_eq(shca_txhist_retire(&h, 4, SHCA_TXH_RETIRE_REPLY, out, 8), 0,
	      "first READ response does not retire it");
	ok_eq(shca_txhist_retire(&h, 5, SHCA_TXH_RETIRE_REPLY, out, 1), 1,
	      "last READ response retires it (max 1)");
	ok_eq(out[0].wqe, 2, "... the READ");
	ok_eq(shca_txhist_retire(&h, 7, 0, NULL, 8), 1,
	      "then the acknowledged SEND retires (NULL out), not the ATOMIC");
	ok_eq(shca_txhist_retire(&h, 7, SHCA_TXH_RETIRE_REPLY, out, 8), 1,
	      "ATOMIC retires with its response");
	ok_eq(shca_txhist_count(&h), 0, "history empty");
	ok_eq(h.stats.retired, 5, "five retired");
	ok_eq(shca_txhist_retire(&h, 7, 0, out, 0), 0, "max 0 retires nothing");
	free(mem);
}

static void test_retire_many(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 64), r, out[5];
	u32 k, id, got = 0, rounds = 0;
	bool order = true;
	int n;

	for (k = 0; k < 64; k++) {
		r = mk(1000 + k, 0xffffe0 + k, 16, 256, 0);
		shca_txhist_push(&h, &r, &id);
		shca_txhist_built(&h, id, 16, true);
	}
	ok(shca_txhist_full(&h), "64 records, full");
	do {
		n = shca_txhist_retire(&h, 0xffffe0 + 40, 0, out, 5);
		for (k = 0; k < (u32)n; k++)
			if (out[k].wqe != 1000 + got + k)
				order = false;
		got += n;
		rounds++;
	} while (n == 5 && rounds < 100);
	ok_eq(got, 41, "retire in batches of 5 up to a PSN past the wrap");
	ok(order, "retired in order");
	ok_eq(shca_txhist_count(&h), 23, "23 left");
	free(mem);
}

static void test_pop_flush(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 4), r, out;
	u32 id0, id1, id2, id;

	r = mk(5, 50, 10, 256, 0);
	shca_txhist_push(&h, &r, &id0);
	r = mk(6, 51, 10, 256, 0);
	shca_txhist_push(&h, &r, &id1);
	ok_eq(shca_txhist_pop(&h, &out), 0, "pop an unbuilt record");
	ok_eq(out.wqe, 5, "pop returns the oldest");
	ok(shca_txhist_get(&h, id0) == NULL, "its id is stale");
	ok_eq(shca_txhist_flush(&h), 1, "flush drops the rest");
	ok(shca_txhist_get(&h, id1) == NULL, "flushed id is stale");
	r = mk(7, 900, 10, 256, 0);
	ok_eq(shca_txhist_push(&h, &r, &id2), 0,
	      "after a flush any PSN may start");
	ok_eq(id2, id1 + 1, "ids continue after a flush");
	ok_eq(shca_txhist_get(&h, id2)->msn, 2, "MSN continues after a flush");
	shca_txhist_reset(&h);
	r = mk(8, 5, 10, 256, 0);
	shca_txhist_push(&h, &r, &id);
	ok_eq(shca_txhist_get(&h, id)->msn, 0, "reset restarts the MSN");
	ok(h.stats.popped == 1 && h.stats.flushed == 2,
	   "pop and flush counted");
	free(mem);
}

/*
 * A message cut with MTU 4096 is replayed from its third packet after
 * the path MTU became 1024: the position comes from the record.
 */
static void test_replay(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 8), r;
	struct shca_txhist_pos p;
	u32 a, b, c, d;
	int ret;

	r = mk(1, 0xfffffe, 10000, 4096, 0);	/* 0xfffffe, 0xffffff, 0 */
	shca_txhist_push(&h, &r, &a);
	r = mk(2, 1, 3000, 1024, 0);		/* 1, 2, 3 (new MTU) */
	shca_txhist_push(&h, &r, &b);
	r = mk(3, 4, 5000, 2048, SHCA_TXH_F_READ);	/* 4, 5, 6 */
	shca_txhist_push(&h, &r, &c);
	r = mk(4, 7, 8, 1024, SHCA_TXH_F_ATOMIC);	/* 7 */
	shca_txhist_push(&h, &r, &d);

	ok_eq(shca_txhist_replay(&h, 0, &p), 0, "replay from PSN 0");
	ok(p.id == a && p.psn == 0 && p.off == 8192 && p.len == 1808,
	   "third packet of the 4096-MTU message: offset 8192, 1808 bytes (got id %u off %u len %u)",
	   p.id - a, p.off, p.len);
	ok_eq(shca_txhist_pos_next(&h, &p), 0, "next packet");
	ok(p.id == b && p.psn == 1 && p.off == 0 && p.len == 1024,
	   "first packet of the next message, its own MTU 1024");
	shca_txhist_pos_next(&h, &p);
	shca_txhist_pos_next(&h, &p);
	ok(p.psn == 3 && p.off == 2048 && p.len == 952,
	   "last packet: offset 2048, 952 bytes");
	ok_eq(shca_txhist_pos_next(&h, &p), 0, "next: the READ");
	ok(p.id == c && p.psn == 4 && p.off == 0 && p.len == 5000,
	   "READ request for all 5000 bytes");
	ok_eq(shca_txhist_pos_next(&h, &p), 0, "next after the READ request");
	ok(p.id == d && p.psn == 7 && p.len == 0,
	   "one READ request covers its responses: next is the ATOMIC");
	ok_eq(shca_txhist_pos_next(&h, &p), SHCA_TXH_ENOENT,
	      "nothing after the newest record");
	ok(p.id == d && p.psn == 7, "position left as it was");

	ok_eq(shca_txhist_replay(&h, 5, &p), 0, "replay from a READ response");
	ok(p.id == c && p.off == 2048 && p.len == 2952,
	   "READ request again from offset 2048 for 2952 bytes");
	ok_eq(shca_txhist_replay(&h, 0xfffffd, &p), SHCA_TXH_ENOENT,
	      "replay from a PSN not held");
	ok_eq(h.stats.replays, 2, "replays counted");
	p.id = a;
	p.psn = 3;
	ok_eq(shca_txhist_pos_next(&h, &p), SHCA_TXH_EINVAL,
	      "next with a PSN outside the record refused");
	ok_eq(shca_txhist_pos_at(&h, b, 0, &p), SHCA_TXH_EINVAL,
	      "pos_at with a PSN of another record refused");
	ok(!shca_txhist_get(&h, a | 0x80000000u),
	   "an id with bit 31 set names no record");
	ok_eq(shca_txhist_pos_at(&h, a | 0x80000000u, 0, &p), SHCA_TXH_EINVAL,
	      "pos_at with an id with bit 31 set refused");
	p.id = b;
	p.psn = 1 | 0x1000000u;
	ok_eq(shca_txhist_pos_next(&h, &p), SHCA_TXH_EINVAL,
	      "next with a PSN wider than 24 bits refused");
	shca_txhist_built(&h, a, 10000, true);
	shca_txhist_retire(&h, 0, 0, NULL, 8);
	p.id = a;
	p.psn = 0;
	ret = shca_txhist_pos_next(&h, &p);
	ok_eq(ret, SHCA_TXH_EINVAL, "next from a retired record refused");
	free(mem);
}

static void test_id_wrap(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 4), r;
	u32 ids[6], k;
	bool good = true;

	/* an empty history whose ids are about to wrap */
	h.head = SHCA_TXH_ID_MASK - 1;
	for (k = 0; k < 6; k++) {
		r = mk(k, 10 + k, 1, 256, 0);
		if (shca_txhist_push(&h, &r, &ids[k])) {
			good = false;
			break;
		}
		shca_txhist_built(&h, ids[k], 1, true);
		if (k >= 2 && shca_txhist_retire(&h, 10 + k - 2, 0, NULL, 1) != 1)
			good = false;
	}
	ok(good, "pushes and retires across the id wrap");
	ok(ids[0] == SHCA_TXH_ID_MASK - 1 && ids[1] == SHCA_TXH_ID_MASK &&
	   ids[2] == 0 && ids[3] == 1, "ids wrap at 2^31");
	ok(shca_txhist_get(&h, ids[5]) && shca_txhist_get(&h, ids[4]) &&
	   shca_txhist_get(&h, ids[5])->wqe == 5, "ids after the wrap resolve");
	ok(!shca_txhist_get(&h, ids[1]), "a retired id before the wrap is stale");
	ok_eq(shca_txhist_check(&h), 0, "check passes");
	free(mem);
}

static void test_cap1(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 1), r;
	u32 id, k;
	bool good = true;

	for (k = 0; k < 10; k++) {
		r = mk(k, k * 3, 700, 256, 0);
		if (shca_txhist_push(&h, &r, &id) ||
		    shca_txhist_push(&h, &r, &id) != SHCA_TXH_EFULL ||
		    shca_txhist_built(&h, id, 700, true) ||
		    shca_txhist_retire(&h, k * 3 + 2, 0, &r, 1) != 1 ||
		    r.wqe != k)
			good = false;
	}
	ok(good, "capacity 1: push, full, retire, ten times");
	free(mem);
}

static void test_corrupt(void)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, 4), r, out[4];
	struct shca_txhist_pos p;
	u32 id, saved;

	r = mk(1, 0, 3000, 1024, 0);
	shca_txhist_push(&h, &r, &id);
	r = mk(2, 3, 10, 1024, 0);
	shca_txhist_push(&h, &r, &id);

	mem[1].first_psn = 9;
	ok_eq(shca_txhist_check(&h), SHCA_TXH_ECORRUPT, "check finds a PSN gap");
	ok_eq(shca_txhist_find(&h, 3, &id), SHCA_TXH_ECORRUPT,
	      "find reports the gap rather than a wrong record");
	mem[1].first_psn = 3;
	mem[0].mtu = 1000;
	ok_eq(shca_txhist_check(&h), SHCA_TXH_ECORRUPT, "check finds a bad MTU");
	ok_eq(shca_txhist_pos_at(&h, h.head, 1, &p), SHCA_TXH_ECORRUPT,
	      "pos_at refuses a bad MTU");
	mem[0].mtu = 1024;
	mem[0].offset = 5000;
	ok_eq(shca_txhist_check(&h), SHCA_TXH_ECORRUPT,
	      "check finds an offset beyond the length");
	mem[0].offset = 0;
	mem[1].msn = 7;
	ok_eq(shca_txhist_check(&h), SHCA_TXH_ECORRUPT, "check finds an MSN gap");
	mem[1].msn = 1;
	ok_eq(shca_txhist_check(&h), 0, "repaired: check passes");

	saved = h.count;
	h.count = 5;
	ok_eq(shca_txhist_check(&h), SHCA_TXH_ECORRUPT, "count above capacity");
	ok_eq(shca_txhist_push(&h, &r, &id), SHCA_TXH_ECORRUPT,
	      "push refuses a corrupt FIFO");
	ok_eq(shca_txhist_retire(&h, 100, SHCA_TXH_RETIRE_REPLY, out, 4),
	      SHCA_TXH_ECORRUPT, "retire refuses a corrupt FIFO");
	ok_eq(shca_txhist_find(&h, 0, &id), SHCA_TXH_ECORRUPT,
	      "find refuses a corrupt FIFO");
	ok(shca_txhist_get(&h, h.head) == NULL, "get refuses a corrupt FIFO");
	ok_eq(shca_txhist_count(&h), 0, "count reads 0 when corrupt");
	ok_eq(shca_txhist_replay(&h, 0, &p), SHCA_TXH_ECORRUPT,
	      "replay refuses a corrupt FIFO");
	h.count = saved;
	saved = h.head_slot;
	h.head_slot = 4;
	ok_eq(shca_txhist_pop(&h, out), SHCA_TXH_ECORRUPT,
	      "head slot out of range refused");
	ok_eq(shca_txhist_flush(&h), 0, "flush of a corrupt FIFO starts over");
	ok(h.count == 0 && h.head_slot == 0 && shca_txhist_check(&h) == 0,
	   "... and leaves it empty and sane");
	ok(h.stats.corrupt >= 5, "corruption counted (%llu)",
	   (unsigned long long)h.stats.corrupt);
	(void)saved;
	free(mem);
}

/* ---- model-based random test ------------------------------------- */

struct model {
	struct shca_txhist_rec r[64];
	u32 id[64];
	u32 n;
	u32 next_psn;
	u32 msn;
};

static u64 rng_state = 0x9e3779b97f4a7c15ull;

static u32 rnd(u32 n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (u32)(rng_state >> 11) % n;
}

static void model_drop(struct model *m, u32 k)
{
	memmove(&m->r[0], &m->r[k], (m->n - k) * sizeof(m->r[0]));
	memmove(&m->id[0], &m->id[k], (m->n - k) * sizeof(m->id[0]));
	m->n -= k;
}

static bool rec_eq(const struct shca_txhist_rec *a,
		   const struct shca_txhist_rec *b)
{
	return a->wqe == b->wqe && a->first_psn == b->first_psn &&
	       a->last_psn == b->last_psn && a->msn == b->msn &&
	       a->length == b->length && a->offset == b->offset &&
	       a->mtu == b->mtu && a->opcode == b->opcode &&
	       a->flags == b->flags;
}

/* One random operation; returns false on the first disagreement. */
static bool random_step(struct shca_txhist *h, struct model *m, u32 cap,
			u32 step)
{
	static const u32 mtus[] = { 256, 512, 1024, 2048, 4096 };
	struct shca_txhist_rec r, out[4];
	struct shca_txhist_pos p;
	u32 op = rnd(100), k, id, psn, want;
	int ret, n;

	if (op < 35) {			/* push */
		u8 f = rnd(4) == 0 ? SHCA_TXH_F_READ :
		       rnd(8) == 0 ? SHCA_TXH_F_ATOMIC : 0;
		u32 len = f == SHCA_TXH_F_ATOMIC ? 8 : rnd(3) ? rnd(9000) : 0;

		r = mk(step, m->next_psn, len, mtus[rnd(5)],
		       f | (rnd(2) ? SHCA_TXH_F_SIGNALED : 0));
		ret = shca_txhist_push(h, &r, &id);
		if (m->n == cap)
			return ret == SHCA_TXH_EFULL;
		if (ret)
			return false;
		r.msn = m->msn;
		m->msn = (m->msn + 1) & PSN_MASK;
		m->r[m->n] = r;
		m->id[m->n++] = id;
		m->next_psn = (r.last_psn + 1) & PSN_MASK;
		return true;
	}
	if (op < 55) {			/* build a packet of some record */
		if (!m->n)
			return true;
		k = rnd(m->n);
		r = m->r[k];
		if (r.flags & SHCA_TXH_F_BUILT)
			return true;
		if ((r.flags & SHCA_TXH_F_REPLY) ||
		    r.length - r.offset <= r.mtu) {
			r.offset = r.length;
			r.flags |= SHCA_TXH_F_BUILT;
		} else {
			r.offset += r.mtu;
		}
		ret = shca_txhist_built(h, m->id[k], r.offset,
					r.flags & SHCA_TXH_F_BUILT);
		m->r[k] = r;
		return ret == 0;
	}
	if (op < 75) {			/* retire up to a random PSN */
		u32 flags = rnd(2) ? SHCA_TXH_RETIRE_REPLY : 0;

		if (!m->n)
			return true;
		psn = (m->r[0].first_psn + rnd(40)) & PSN_MASK;
		for (k = 0; k < m->n && k < 4; k++) {
			r = m->r[k];
			if (shca_psn_diff(r.last_psn, psn) > 0 ||
			    !(r.flags & SHCA_TXH_F_BUILT) ||
			    ((r.flags & SHCA_TXH_F_REPLY) && !flags))
				break;
		}
		n = shca_txhist_retire(h, psn, flags, out, 4);
		if (n != (int)k)
			return false;
		for (k = 0; k < (u32)n; k++)
			if (!rec_eq(&out[k], &m->r[k]))
				return false;
		model_drop(m, n);
		return true;
	}
	if (op < 90) {			/* find / replay a random PSN */
		psn = (m->next_psn - rnd(60)) & PSN_MASK;
		for (want = 0; want < m->n; want++)
			if (shca_psn_diff(psn, m->r[want].first_psn) >= 0 &&
			    shca_psn_diff(psn, m->r[want].last_psn) <= 0)
				break;
		ret = shca_txhist_replay(h, psn, &p);
		if (want == m->n)
			return ret == SHCA_TXH_ENOENT;
		r = m->r[want];
		k = (u32)shca_psn_diff(psn, r.first_psn) * r.mtu;
		if (ret || p.id != m->id[want] || p.psn != psn)
			return false;
		if (r.flags & SHCA_TXH_F_ATOMIC)
			return p.off == 0 && p.len == 0;
		if (r.flags & SHCA_TXH_F_READ)
			return p.off == k && p.len == r.length - k;
		return p.off == k &&
		       p.len == (r.length - k < r.mtu ? r.length - k : r.mtu);
	}
	if (op < 95) {			/* pop */
		ret = shca_txhist_pop(h, &r);
		if (!m->n)
			return ret == SHCA_TXH_ENOENT;
		if (ret || !rec_eq(&r, &m->r[0]))
			return false;
		model_drop(m, 1);
		return true;
	}
	if (op < 97) {			/* flush */
		if (shca_txhist_flush(h) != m->n)
			return false;
		m->n = 0;
		return true;
	}
	/* every held record reads back */
	for (k = 0; k < m->n; k++) {
		const struct shca_txhist_rec *g = shca_txhist_get(h, m->id[k]);

		if (!g || !rec_eq(g, &m->r[k]))
			return false;
	}
	return true;
}

static void test_random(u32 cap, u32 steps)
{
	struct shca_txhist h;
	struct shca_txhist_rec *mem = hist_new(&h, cap);
	struct model m = { .next_psn = 0xffff00 };
	u32 step;
	bool good = true;

	for (step = 0; step < steps && good; step++) {
		good = random_step(&h, &m, cap, step);
		if (good && (shca_txhist_check(&h) ||
			     shca_txhist_count(&h) != m.n))
			good = false;
		if (!good)
			diag("model and history disagree at step %u", step);
	}
	ok(good, "random model test, capacity %u, %u steps", cap, steps);
	ok(h.stats.hwm <= cap && h.stats.corrupt == 0 && h.stats.invalid == 0,
	   "no corruption or invalid call seen (hwm %u)", h.stats.hwm);
	free(mem);
}

int main(void)
{
	tap_start();
	test_init();
	test_npkts();
	test_push();
	test_span();
	test_find_wrap();
	test_built();
	test_retire();
	test_retire_many();
	test_pop_flush();
	test_replay();
	test_id_wrap();
	test_cap1();
	test_corrupt();
	test_random(1, 20000);
	test_random(5, 200000);
	test_random(64, 200000);
	return tap_done();
}
