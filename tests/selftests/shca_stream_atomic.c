// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_stream_test's atomic mode: fetch-adds and compare-swaps on one
 * remote word, every returned value checked.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_stream.h"

/* ------------------------------------------------------------------ */
/* atomic mode                                                          */

/*
 * Operation K: a fetch-add of 1..1000, or (every fourth) a compare-swap
 * that expects the current value and adds the same way, or (every
 * eighth) a compare-swap whose compare fails: it changes nothing.
 */
static uint64_t atomic_add(uint64_t k)
{
	return 1 + mix64(opt.seed ^ (k * 31 + 7)) % 1000;
}

static int atomic_kind(uint64_t k)
{
	return k % 8 == 7 ? 2 : k % 4 == 3 ? 1 : 0;
}

struct atomics {
	struct ep e[2];
	uint64_t *res, *word;
	struct ibv_mr *res_mr, *word_mr;
	uint64_t *before;	/* value each op finds, in order */
	uint64_t posted, done;
};

static int atomic_post(struct atomics *a)
{
	uint64_t k = a->posted, *res = &a->res[k % opt.depth];
	uint64_t cur = a->before[k];
	int kind = atomic_kind(k);

	*res = ~cur;	/* anything but the expected value */
	a->posted++;
	if (kind == 0)
		return post_atomic(&a->e[0], k, IBV_WR_ATOMIC_FETCH_AND_ADD,
				   res, a->res_mr->lkey, (uintptr_t)a->word,
				   a->word_mr->rkey, atomic_add(k), 0);
	return post_atomic(&a->e[0], k, IBV_WR_ATOMIC_CMP_AND_SWP, res,
			   a->res_mr->lkey, (uintptr_t)a->word,
			   a->word_mr->rkey, kind == 1 ? cur : cur ^ 0x100,
			   cur + atomic_add(k));
}

static bool atomic_wc(struct atomics *a, const struct ibv_wc *wc)
{
	uint64_t k = a->done, got = a->res[k % opt.depth];
	enum ibv_wc_opcode op = atomic_kind(k) ? IBV_WC_COMP_SWAP :
				IBV_WC_FETCH_ADD;

	if (!wc_ok(wc, "send queue", k, IBV_WC_SUCCESS, a->e[0].qp))
		return false;
	if (wc->opcode != op) {
		failf("atomic %llu: opcode %d, expected %d",
		      (unsigned long long)k, wc->opcode, op);
		return false;
	}
	if (got != a->before[k]) {
		failf("atomic %llu (%s): returned 0x%llx, expected 0x%llx (%lld adds off: executed twice or lost?)",
		      (unsigned long long)k,
		      op == IBV_WC_FETCH_ADD ? "fetch-add" : "compare-swap",
		      (unsigned long long)got,
		      (unsigned long long)a->before[k],
		      (long long)(got - a->before[k]));
		return false;
	}
	a->done++;
	return true;
}

static int atomic_setup(struct atomics *a, uint64_t start)
{
	uint64_t k, v = start;
	unsigned int i;

	a->before = malloc((opt.count + 1) * sizeof(*a->before));
	a->res = zalloc(opt.depth * sizeof(*a->res) + 4096);
	a->word = zalloc(4096);
	if (!a->before || !a->res || !a->word)
		return -1;
	for (k = 0; k < opt.count; k++) {
		a->before[k] = v;
		if (atomic_kind(k) != 2)
			v += atomic_add(k);
	}
	a->before[opt.count] = v;
	*a->word = start;
	a->res_mr = reg(0, a->res, opt.depth * sizeof(*a->res),
			IBV_ACCESS_LOCAL_WRITE);
	a->word_mr = reg(1, a->word, 4096, MR_ACC_ALL);
	if (!a->res_mr || !a->word_mr)
		return -1;
	if (ep_create(&a->e[0], 0, opt.depth, 1) ||
	    ep_create(&a->e[1], 1, 1, 1))
		return -1;
	for (i = 0; i < 2; i++) {
		struct conn c;

		conn_of(&a->e[!i], &c);
		if (ep_connect(&a->e[i], &c))
			return -1;
	}
	return 0;
}

void run_atomic(void)
{
	uint64_t start = mix64(opt.seed ^ 0xa70) >> 4;
	struct ibv_wc wc[POLL_BATCH];
	struct atomics a = {};
	double t0, last, end;
	unsigned int rounds = 0;
	bool ok = true;
	int n, i;

	if (atomic_setup(&a, start)) {
		tap_result("atomic set-up");
		goto out;
	}
	t0 = last = now_ms();
	end = t0 + opt.deadline_s * 1e3;
	while (ok && a.done < opt.count) {
		while (a.posted < opt.count && a.posted - a.done < opt.depth)
			if (atomic_post(&a)) {
				ok = false;
				break;
			}
		n = cq_poll(a.e[0].scq, wc, POLL_BATCH);
		for (i = 0; ok && i < n; i++)
			ok = atomic_wc(&a, &wc[i]);
		if (n > 0) {
			last = now_ms();
			rounds = 0;
		} else {
			idle(&rounds);
		}
		if (n < 0)
			ok = false;
		if (ok && (now_ms() > end || now_ms() - last > STALL_MS)) {
			failf("stalled: %llu of %u atomics completed, QP state %d",
			      (unsigned long long)a.done, opt.count,
			      qp_state(a.e[0].qp));
			ok = false;
		}
	}
	tap_result("%u atomics (fetch-add, compare-swap, failing compare-swap): each returned the value in-order execution gives",
		   opt.count);
	if (ok)
		diag("%u atomics in %.2f s", opt.count, (now_ms() - t0) / 1e3);
	if (*a.word != a.before[opt.count])
		failf("remote word 0x%llx, expected 0x%llx (%lld off)",
		      (unsigned long long)*a.word,
		      (unsigned long long)a.before[opt.count],
		      (long long)(*a.word - a.before[opt.count]));
	tap_result("remote word ends at the exact sum (start 0x%llx + 0x%llx)",
		   (unsigned long long)start,
		   (unsigned long long)(a.before[opt.count] - start));
	expect_quiet(a.e[0].scq, "send queue");
	tap_result("no stray completions afterwards");
out:
	ep_destroy(&a.e[0]);
	ep_destroy(&a.e[1]);
	if (a.res_mr)
		ibv_dereg_mr(a.res_mr);
	if (a.word_mr)
		ibv_dereg_mr(a.word_mr);
	free(a.res);
	free(a.word);
	free(a.before);
}
