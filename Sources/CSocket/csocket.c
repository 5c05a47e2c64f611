#define _GNU_SOURCE
#include "csocket.h"

#include <stddef.h>
#include <sys/socket.h>

int csocket_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }
