// The socket and descriptor calls Swift's Glibc module leaves out (GNU extensions, and control
// messages and netlink structures that are macros and packed layouts in C).
#ifndef LATCHKEY_CSOCKET_H
#define LATCHKEY_CSOCKET_H

/// accept4(fd, NULL, NULL, SOCK_CLOEXEC): a connection no child process inherits, from its first moment.
int csocket_accept_cloexec(int fd);

/// SO_PASSCRED on `fd`: the kernel stamps every message sent to it with its sender's process id.
/// Set on a listening socket, before anyone connects, its connections have it from their first byte.
int csocket_pass_credentials(int fd);

/// recv(fd, buffer, length, 0), and in `*sender` the process that wrote those bytes, as the kernel
/// stamped them (SO_PASSCRED; a stream never joins two writers' bytes in one read): 0 when no
/// credentials came with them.
long csocket_recv_from_sender(int fd, void *buffer, unsigned long length, int *sender);

/// The inode of the socket at the other end of the Unix socket `inode` (NETLINK_SOCK_DIAG, with
/// UDIAG_SHOW_PEER), and in `name` (at most `capacity` bytes, NUL-terminated; an abstract name
/// starts with '@') the address that peer is bound to, or "" for none (UDIAG_SHOW_NAME). 0 when
/// the socket is unknown, has no peer, or the kernel would not say.
unsigned csocket_unix_peer(unsigned inode, char *name, unsigned long capacity);

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): a descriptor poll(2) can wait on beside others, made
/// readable by writing an 8-byte count to it.
int csocket_eventfd(void);

#endif
