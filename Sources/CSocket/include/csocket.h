// The one socket call Swift's Glibc module leaves out (it is a GNU extension).
#ifndef LATCHKEY_CSOCKET_H
#define LATCHKEY_CSOCKET_H

/// accept4(fd, NULL, NULL, SOCK_CLOEXEC): a connection no child process inherits, from its first moment.
int csocket_accept_cloexec(int fd);

#endif
