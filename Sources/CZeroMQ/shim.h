#ifndef CHIME_CZEROMQ_SHIM_H
#define CHIME_CZEROMQ_SHIM_H

#include <zmq.h>

#endif
