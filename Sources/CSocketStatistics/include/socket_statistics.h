#ifndef CHIME_SOCKET_STATISTICS_H
#define CHIME_SOCKET_STATISTICS_H

#include <stdint.h>

/// The bytes a TCP connection's kernel send queue holds that it has not sent yet: Linux's
/// `tcpi_notsent_bytes` (since Linux 4.6), more than 0 when the peer's receive window is
/// closed (it does not read) or the network is slower than the writer.
///
/// It is in `struct tcp_info` of <linux/tcp.h>; glibc's <netinet/tcp.h> copy of the struct
/// ends before it, which is why this is C.
///
/// Returns 0 and sets `*notSent` on success; -1 with `errno` set when `descriptor` is not an
/// open TCP socket (EBADF, ENOTSOCK, EOPNOTSUPP for a Unix socket) or the kernel's `tcp_info`
/// is too short to hold the field (ENOTSUP).
int chime_tcp_bytes_not_sent(int descriptor, uint32_t *notSent);

#endif
