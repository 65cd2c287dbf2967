#include "socket_statistics.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>

int chime_tcp_bytes_acknowledged(int descriptor, uint64_t *acknowledged) {
    struct tcp_info info;
    socklen_t length = sizeof(info);
    memset(&info, 0, sizeof(info));
    if (getsockopt(descriptor, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) {
        return -1;
    }
    if (length < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(info.tcpi_bytes_acked)) {
        errno = ENOTSUP;
        return -1;
    }
    *acknowledged = info.tcpi_bytes_acked;
    return 0;
}
