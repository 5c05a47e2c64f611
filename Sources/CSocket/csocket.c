#define _GNU_SOURCE
#include "csocket.h"

#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int csocket_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }

int csocket_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int csocket_pass_credentials(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

long csocket_recv_from_sender(int fd, void *buffer, unsigned long length, int *sender) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(struct ucred))];
    } control;
    struct iovec vector = {.iov_base = buffer, .iov_len = length};
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    *sender = 0;
    ssize_t n = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    if (n <= 0) return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
            *sender = credentials.pid;
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            // Descriptors passed along are not wanted here: closed at once (those that did not fit
            // in the buffer the kernel has closed already).
            int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < count; i++) {
                int passed;
                memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
                close(passed);
            }
        }
    }
    return n;
}

/// One exact lookup of `inode`; the answer's peer inode, and its bound name when asked.
static unsigned lookup(int netlink, unsigned inode, unsigned show, unsigned *peer, char *name, unsigned long capacity) {
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } ask;
    memset(&ask, 0, sizeof ask);
    ask.header.nlmsg_len = sizeof ask;
    ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    ask.header.nlmsg_flags = NLM_F_REQUEST;
    ask.request.sdiag_family = AF_UNIX;
    ask.request.udiag_ino = inode;
    ask.request.udiag_show = show;
    ask.request.udiag_cookie[0] = ~0U;
    ask.request.udiag_cookie[1] = ~0U;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(netlink, &ask, sizeof ask, 0, (struct sockaddr *)&kernel, sizeof kernel) != sizeof ask) return 0;
    long answer[2048];  // aligned for nlmsghdr
    ssize_t n = recv(netlink, answer, sizeof answer, 0);
    if (n <= 0) return 0;
    struct nlmsghdr *header = (struct nlmsghdr *)answer;
    if (!NLMSG_OK(header, (unsigned)n) || header->nlmsg_type != SOCK_DIAG_BY_FAMILY) return 0;
    struct unix_diag_msg *found = NLMSG_DATA(header);
    if (header->nlmsg_len < NLMSG_LENGTH(sizeof *found) || found->udiag_ino != inode) return 0;
    int left = (int)header->nlmsg_len - (int)NLMSG_LENGTH(sizeof *found);
    struct nlattr *attribute = (struct nlattr *)(found + 1);
    while (left >= (int)sizeof *attribute && attribute->nla_len >= sizeof *attribute && attribute->nla_len <= left) {
        unsigned long size = attribute->nla_len - NLA_HDRLEN;
        unsigned char *data = (unsigned char *)attribute + NLA_HDRLEN;
        if (attribute->nla_type == UNIX_DIAG_PEER && size == sizeof(unsigned) && peer != NULL) {
            memcpy(peer, data, sizeof(unsigned));
        } else if (attribute->nla_type == UNIX_DIAG_NAME && name != NULL && capacity > 0) {
            unsigned long copied = size < capacity - 1 ? size : capacity - 1;
            memcpy(name, data, copied);
            if (copied > 0 && name[0] == '\0') name[0] = '@';
            name[copied] = '\0';
        }
        int step = NLA_ALIGN(attribute->nla_len);
        left -= step;
        attribute = (struct nlattr *)((char *)attribute + step);
    }
    return 1;
}

unsigned csocket_unix_peer(unsigned inode, char *name, unsigned long capacity) {
    if (name != NULL && capacity > 0) name[0] = '\0';
    int netlink = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (netlink < 0) return 0;
    struct timeval wait = {.tv_sec = 1};
    setsockopt(netlink, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    unsigned peer = 0;
    if (!lookup(netlink, inode, UDIAG_SHOW_PEER, &peer, NULL, 0) || peer == 0) peer = 0;
    if (peer != 0 && name != NULL && !lookup(netlink, peer, UDIAG_SHOW_NAME, NULL, name, capacity)) peer = 0;
    close(netlink);
    return peer;
}
