// The least a client of the agent's socket can be: connect, send one plain JSON
// request for the account in argv[1] (and the scopes in argv[2], when given), print the answer. make bench times it as a
// whole process beside `cat` of the token file, the floor.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (argc < 2 || !runtime) return 2;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s/latchkey/agent.sock", runtime);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) return 3;
    char request[512];
    int length = argc > 2 ? snprintf(request, sizeof request, "{\"request\":\"access_token\",\"account\":\"%s\",\"scope\":\"%s\"}", argv[1], argv[2])
                          : snprintf(request, sizeof request, "{\"request\":\"access_token\",\"account\":\"%s\"}", argv[1]);
    if (write(fd, request, length) != length) return 4;
    char answer[65536];
    ssize_t total = 0, n;
    while ((n = read(fd, answer + total, sizeof answer - total)) > 0) total += n;
    fwrite(answer, 1, total, stdout);
    return strstr(answer, "\"status\":\"success\"") ? 0 : 1;
}
