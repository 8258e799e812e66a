/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca_qplife_test's modes that live in files of their own.
 */
#ifndef SHCA_QPLIFE_H
#define SHCA_QPLIFE_H

/*
 * ackwait: an RC QP on @peer receives a SEND from one on @name, the ACK
 * it owes is held @hold_ms in the driver (fault hold point 3) and the QP
 * is reset meanwhile.  The reset must wait for the held ACK to go, and
 * sleep while it waits.  Prints what it measured; returns 0 when both
 * held, 1 when not (said on stderr), 2 for a bad argument.
 */
int ack_wait(const char *name, const char *peer, int hold_ms);

#endif /* SHCA_QPLIFE_H */
