// SPDX-License-Identifier: GPL-2.0
/*
 * shca tracepoints: the one place they are defined (shca_trace.h lists
 * them; Documentation/tracing.md says how to use them).
 */
#define CREATE_TRACE_POINTS
#include "shca_trace.h"
