// One of make bench's load callers: asks the agent for the account in argv[1] (for the scopes in
// argv[3], when given), again and again without pause, for argv[2] seconds; then prints how many calls it made, how many
// failed, and each distinct token it was given (one per line), for the bench to add up.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MOST_TOKENS 4096

static char *tokens[MOST_TOKENS];
static int distinct;

static void note(const char *token, size_t length) {
    for (int i = 0; i < distinct; i++)
        if (strlen(tokens[i]) == length && memcmp(tokens[i], token, length) == 0) return;
    if (distinct < MOST_TOKENS) tokens[distinct++] = strndup(token, length);
}

int main(int argc, char **argv) {
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (argc < 3 || !runtime) return 2;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s/latchkey/agent.sock", runtime);
    char request[512];
    int length = argc > 3 ? snprintf(request, sizeof request,
                                     "{\"request\":\"access_token\",\"account\":\"%s\",\"min_valid_period\":0,\"scope\":\"%s\"}", argv[1], argv[3])
                          : snprintf(request, sizeof request, "{\"request\":\"access_token\",\"account\":\"%s\",\"min_valid_period\":0}", argv[1]);
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += atoi(argv[2]);
    long calls = 0, failed = 0;
    static char answer[65536];
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) break;
        calls++;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0 || send(fd, request, length, MSG_NOSIGNAL) != length) {
            failed++;
            if (fd >= 0) close(fd);
            continue;
        }
        ssize_t total = 0, n;
        while (total < (ssize_t)sizeof answer - 1 && (n = read(fd, answer + total, sizeof answer - 1 - total)) > 0) total += n;
        close(fd);
        answer[total] = 0;
        const char *key = "\"access_token\":\"";
        char *start = strstr(answer, key);
        if (!strstr(answer, "\"status\":\"success\"") || !start) {
            failed++;
            continue;
        }
        start += strlen(key);
        char *stop = strchr(start, '"');
        if (stop) note(start, (size_t)(stop - start));
    }
    printf("calls %ld failed %ld\n", calls, failed);
    for (int i = 0; i < distinct; i++) printf("%s\n", tokens[i]);
    return 0;
}
