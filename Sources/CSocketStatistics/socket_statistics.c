#include "socket_statistics.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>

/// Reads the connection's tcp_info; -1 (errno set) when it cannot or when the kernel's copy
/// ends before `needed` bytes.
static int read_tcp_info(int descriptor, struct tcp_info *info, size_t needed) {
    socklen_t length = sizeof(*info);
    memset(info, 0, sizeof(*info));
    if (getsockopt(descriptor, IPPROTO_TCP, TCP_INFO, info, &length) != 0) {
        return -1;
    }
    if (length < needed) {
        errno = ENOTSUP;
        return -1;
    }
    return 0;
}

int chime_tcp_bytes_not_sent(int descriptor, uint32_t *notSent) {
    struct tcp_info info;
    if (read_tcp_info(descriptor, &info, offsetof(struct tcp_info, tcpi_notsent_bytes) + sizeof(info.tcpi_notsent_bytes)) != 0) {
        return -1;
    }
    *notSent = info.tcpi_notsent_bytes;
    return 0;
}
