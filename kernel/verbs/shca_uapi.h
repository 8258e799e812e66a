/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca's own uverbs ioctl attributes and methods (shca_uapi.c).
 */
#ifndef SHCA_UAPI_H
#define SHCA_UAPI_H

#include <rdma/uverbs_ioctl.h>

extern const struct uapi_definition shca_uapi_defs[];

#endif /* SHCA_UAPI_H */
