// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPI over shca: a ping-pong between ranks 0 and 1 at sizes from 1 byte to
 * 4 MiB and an allreduce across all ranks, every byte of every message and
 * every element of every result checked.
 *
 *   mpirun -np 2 ... shca_mpi_test [ITERATIONS]
 *
 * Prints one line per check; exits 0 when all data was right.  A last
 * exchange, the probe, has rank 1 flip one bit of its reply, to show that
 * the check sees it: its line must say 1 bad byte (not counted in the exit
 * status).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE	(4 << 20)
#define ALLREDUCE_N	(256 * 1024)

/* The byte at @i of message @iter of size @size sent by @rank. */
static unsigned char pattern(int rank, int iter, size_t size, size_t i)
{
	return (unsigned char)(i * 131 + size * 7 + iter * 17 + rank * 101);
}

static void fill(unsigned char *buf, int rank, int iter, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++)
		buf[i] = pattern(rank, iter, size, i);
}

static long bad_bytes(const unsigned char *buf, int rank, int iter,
		      size_t size)
{
	long bad = 0;
	size_t i;

	for (i = 0; i < size; i++)
		bad += buf[i] != pattern(rank, iter, size, i);
	return bad;
}

/*
 * One exchange of @size bytes: rank 0 sends, rank 1 checks and answers
 * with its own pattern, one bit of it flipped when @spoil, and rank 0
 * checks the answer.  Returns the bad bytes this rank saw.
 */
static long exchange(int rank, int iter, size_t size, int spoil,
		     unsigned char *sbuf, unsigned char *rbuf)
{
	long bad = 0;

	memset(rbuf, 0, size);
	fill(sbuf, rank, iter, size);
	if (rank == 0) {
		MPI_Send(sbuf, size, MPI_BYTE, 1, iter, MPI_COMM_WORLD);
		MPI_Recv(rbuf, size, MPI_BYTE, 1, iter, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		bad = bad_bytes(rbuf, 1, iter, size);
	} else if (rank == 1) {
		MPI_Recv(rbuf, size, MPI_BYTE, 0, iter, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		bad = bad_bytes(rbuf, 0, iter, size);
		if (spoil)
			sbuf[size / 2] ^= 1;
		MPI_Send(sbuf, size, MPI_BYTE, 0, iter, MPI_COMM_WORLD);
	}
	return bad;
}

/* Every size from 1 B to MAX_SIZE, @iters exchanges each */
static long pingpong(int rank, int iters, unsigned char *sbuf,
		     unsigned char *rbuf)
{
	long bad = 0;
	size_t size;
	int iter;

	for (size = 1; size <= MAX_SIZE; size *= 4)
		for (iter = 0; iter < iters; iter++)
			bad += exchange(rank, iter, size, 0, sbuf, rbuf);
	return bad;
}

/* Each rank contributes rank + i * (iter + 1); the sum is known. */
static long allreduce(int rank, int nranks, int iters, long *in, long *out)
{
	long bad = 0, i, want;
	int iter;

	for (iter = 0; iter < iters; iter++) {
		for (i = 0; i < ALLREDUCE_N; i++) {
			in[i] = rank + i * (iter + 1);
			out[i] = -1;
		}
		MPI_Allreduce(in, out, ALLREDUCE_N, MPI_LONG, MPI_SUM,
			      MPI_COMM_WORLD);
		for (i = 0; i < ALLREDUCE_N; i++) {
			want = (long)nranks * (nranks - 1) / 2 +
			       (long)nranks * i * (iter + 1);
			bad += out[i] != want;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	int rank, nranks, iters = argc > 1 ? atoi(argv[1]) : 3;
	unsigned char *sbuf, *rbuf;
	long bad_pp, bad_ar, bad_probe, total;
	long *in, *out;
	double t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	sbuf = malloc(MAX_SIZE);
	rbuf = malloc(MAX_SIZE);
	in = malloc(ALLREDUCE_N * sizeof(*in));
	out = malloc(ALLREDUCE_N * sizeof(*out));
	if (!sbuf || !rbuf || !in || !out || nranks < 2 || iters < 1) {
		fprintf(stderr, "shca_mpi_test: need 2+ ranks and memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	t = MPI_Wtime();
	bad_pp = pingpong(rank, iters, sbuf, rbuf);
	MPI_Allreduce(MPI_IN_PLACE, &bad_pp, 1, MPI_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	if (rank == 0)
		printf("ping-pong 1 B..4 MiB x %d: %ld bad bytes (%.2f s)\n",
		       iters, bad_pp, MPI_Wtime() - t);

	t = MPI_Wtime();
	bad_ar = allreduce(rank, nranks, iters, in, out);
	MPI_Allreduce(MPI_IN_PLACE, &bad_ar, 1, MPI_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	if (rank == 0)
		printf("allreduce %d longs x %d over %d ranks: %ld wrong (%.2f s)\n",
		       ALLREDUCE_N, iters, nranks, bad_ar, MPI_Wtime() - t);

	bad_probe = exchange(rank, 0, 4096, 1, sbuf, rbuf);
	if (rank == 0)
		printf("probe: rank 1 flipped one bit of a 4 KiB reply: %ld bad bytes\n",
		       bad_probe);

	total = bad_pp + bad_ar;
	free(sbuf);
	free(rbuf);
	free(in);
	free(out);
	MPI_Finalize();
	return total ? 1 : 0;
}
