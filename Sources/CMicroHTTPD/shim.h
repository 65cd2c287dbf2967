#ifndef CHIME_CMICROHTTPD_SHIM_H
#define CHIME_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* MHD_get_daemon_info is variadic, which Swift cannot call: the port a daemon bound
   (the one the kernel chose for port 0), or 0 when libmicrohttpd cannot say. */
static inline uint16_t chime_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* MHD_get_connection_info is variadic too: the socket of a connection, or -1. */
static inline int chime_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* Whether this libmicrohttpd serves HTTPS (built with GnuTLS): MHD_FEATURE_TLS shares its
   value with MHD_FEATURE_SSL, which Swift's import of the enum does not name plainly. */
static inline int chime_mhd_supports_tls(void) {
    return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

#endif
