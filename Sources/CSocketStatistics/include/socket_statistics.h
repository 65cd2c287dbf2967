#ifndef CHIME_SOCKET_STATISTICS_H
#define CHIME_SOCKET_STATISTICS_H

#include <stdint.h>

/// The bytes of a TCP connection's stream the peer has acknowledged, since the connection
/// began: Linux's `tcpi_bytes_acked` (RFC 4898 tcpEStatsAppHCThruOctetsAcked, in
/// `struct tcp_info` of <linux/tcp.h> since Linux 4.1; glibc's <netinet/tcp.h> copy of the
/// struct ends before it, which is why this is C).
///
/// Returns 0 and sets `*acknowledged` on success; -1 with `errno` set when `descriptor` is
/// not an open TCP socket (EBADF, ENOTSOCK, EOPNOTSUPP for a Unix socket) or the kernel's
/// `tcp_info` is too short to hold the field (ENOTSUP).
int chime_tcp_bytes_acknowledged(int descriptor, uint64_t *acknowledged);

/// The bytes a TCP connection's kernel send queue holds that it has not sent yet: Linux's
/// `tcpi_notsent_bytes` (since Linux 4.6), more than 0 when the peer's receive window is
/// closed (it does not read) or the network is slower than the writer.
///
/// Returns 0 and sets `*notSent` on success; -1 with `errno` set as for
/// `chime_tcp_bytes_acknowledged`.
int chime_tcp_bytes_not_sent(int descriptor, uint32_t *notSent);

#endif
