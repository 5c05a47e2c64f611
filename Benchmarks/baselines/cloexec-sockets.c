// LD_PRELOAD for make bench's oidc-token row: its sockets made close-on-exec, nothing else changed.
// Debian's oidc-token keeps its connection to the agent open across exec, and Latchkey's agent
// never hands a standing grant's token to such a connection (a program it starts could read the
// answer): without this, oidc-token could only be measured against a question on the desktop.
// What loading this costs a process is measured beside it (cat with and without it) and taken
// off oidc-token's time, so that the baseline is not made slower by the change.
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int socket(int domain, int type, int protocol) { return (int)syscall(SYS_socket, domain, type | SOCK_CLOEXEC, protocol); }
