// `latchkey curl [LATCHKEY OPTIONS] [--] CURL ARGUMENTS… URL`: curl with the provider's token, for
// programs and people that only speak Bearer. A token bound to a key Latchkey holds (DPoP, RFC 9449)
// goes with a proof of that key for this request's method and URL, signed by whoever holds the key
// (the agent, or `latchkey token`); the key itself never leaves. When the resource asks for its
// nonce (401, use_dpop_nonce, §9), the request is made once more with a proof carrying it.
//
// The token and the proof reach curl in a file only it and this process can open (`-H @/dev/fd/N`,
// a memfd; or the pipe below), never on a command line another program could read in /proc. The
// token comes from the agent itself when one runs and only --provider (and --account) are given;
// otherwise from `latchkey token --format header` (the app: with or without an agent, narrowed,
// signed in first).
//
// Asking the agent, curl is started at once (child.c), for its load (most of what this command
// costs) to overlap the agent's answer: it waits for its URL and header lines on a pipe (`-K
// /dev/fd/N`), and is ended unused when there is no token, or one that needs a proof (whose request
// is run as before). This process then waits for it and ends as it ended.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_answer.h"
#include "front.h"

enum { MOST_ARGUMENTS = 4096 };

// The options of `latchkey token` that `latchkey curl` takes, and whether each takes a value.
static const struct {
    const char *name;
    int takes_value;
} token_options[] = {
    {"--provider", 1}, {"--account", 1}, {"--resource", 1}, {"--scope", 1}, {"--audience", 1},
    {"--min-valid", 1}, {"--log-level", 1}, {"--device", 0}, {"--paste", 0},
};

// Whether argv[*i] is one of token_options (its value taken along); 1 when it is.
static int token_option(int argc, char **argv, int *i) {
    for (size_t k = 0; k < sizeof token_options / sizeof *token_options; k++) {
        size_t n = strlen(token_options[k].name);
        if (strncmp(argv[*i], token_options[k].name, n) != 0) continue;
        if (!token_options[k].takes_value) {
            if (argv[*i][n] == 0) return 1;
        } else if (argv[*i][n] == '=') {
            return 1;
        } else if (argv[*i][n] == 0 && *i + 1 < argc) {
            ++*i;
            return 1;
        }
    }
    return 0;
}

static int starts_with_http(const char *text) { return strncasecmp(text, "https://", 8) == 0 || strncasecmp(text, "http://", 7) == 0; }

// curl's options that take a value (a short one's may be joined to it: -XPUT), the most used ones: the
// value of one of these is never taken for the URL. An option not listed is taken for a flag, so a
// value of it that looks like a URL makes two URLs, which is refused (failing closed).
static const char short_values[] = "AbcCdDeEFHmoPQrTuUwxXyYz";
static const char *long_values[] = {
    "--abstract-unix-socket", "--cacert", "--capath", "--cert", "--cert-type", "--ciphers", "--connect-timeout", "--connect-to",
    "--cookie", "--cookie-jar", "--crlfile", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode",
    "--dns-servers", "--doh-url", "--dump-header", "--form", "--form-string", "--header", "--interface", "--json", "--key",
    "--key-type", "--limit-rate", "--local-port", "--max-filesize", "--max-time", "--noproxy", "--output", "--output-dir", "--pass",
    "--pinnedpubkey", "--preproxy", "--proto", "--proto-redir", "--proxy", "--proxy-header", "--proxy-user", "--range", "--referer",
    "--request", "--resolve", "--retry", "--retry-delay", "--retry-max-time", "--socks4", "--socks4a", "--socks5",
    "--socks5-hostname", "--stderr", "--trace", "--trace-ascii", "--unix-socket", "--upload-file", "--url", "--user",
    "--user-agent", "--write-out",
};

// A list of names, and how many: for in() and abbreviated().
#define LIST(list) list, sizeof list / sizeof *list

// Whether `name` is one of `list`'s.
static int in(const char *name, const char **list, size_t count) {
    for (size_t k = 0; k < count; k++)
        if (strcmp(name, list[k]) == 0) return 1;
    return 0;
}

// What curl's arguments say of the request.
struct request {
    const char *url;
    // -X/--request, else HEAD for -I, PUT for -T, GET for -G, POST for a body (-d, --data…, -F, --form…,
    // --json); else GET.
    const char *method;
    int url_at, url_span;  // where the URL is among them: --url URL spans 2
    int own_output;        // they name where the answer goes: -o FILE, -O, --remote-name(-all)
    // Something of curl's goes to standard output besides the answer (-w, -o -, --trace -, …), or to
    // where the front reads the answer's header lines (-D), or its output files are put elsewhere
    // (--output-dir): its first try cannot be kept aside by its configuration, only by its standard output.
    int elsewhere;
    int in_place;  // the URL must stay where it is among them (--remote-name-all): curl is not started early
};

static const char *elsewhere_options[] = {"--write-out", "--dump-header", "--trace",  "--trace-ascii", "--stderr",
                                          "--libcurl",   "--help",        "--version", "--manual",     "--output-dir"};

// Long options whose meaning the front must know, beside long_values and elsewhere_options.
static const char *known_flags[] = {"--next",  "--config", "--no-globoff", "--globoff", "--remote-name", "--remote-name-all",
                                    "--head",  "--get",    "--output",     "--url",     "--request"};

// Whether `name` is the start of one of `list`'s, and not the whole of it.
static int abbreviated(const char *name, const char **list, size_t count) {
    size_t n = strlen(name);
    for (size_t k = 0; k < count; k++)
        if (strlen(list[k]) > n && strncmp(list[k], name, n) == 0) return 1;
    return 0;
}

// Whether `name` is a shortening of a long option the front must know: curl takes any unique start of
// one (--nex for --next, --no-glob for --no-globoff), which the front would not recognise.
static int shortened(const char *name) {
    if (in(name, LIST(long_values)) || in(name, LIST(elsewhere_options)) || in(name, LIST(known_flags))) return 0;
    return abbreviated(name, LIST(long_values)) || abbreviated(name, LIST(elsewhere_options)) || abbreviated(name, LIST(known_flags));
}

// `request` from curl's arguments; 0, or -1 with `problem` set when they name no URL, or more than one
// place the token would go to.
static int curl_request(int count, char **arguments, struct request *request, const char **problem) {
    const char *url = NULL, *asked = NULL, *implied = "GET";
    int urls = 0, get = 0;
    for (int i = 0; i < count; i++) {
        const char *a = arguments[i], *value = NULL;
        int started = i;
        // Each of these would let curl send the token elsewhere: another request (--next, -:, a
        // configuration's), every argument after a second `--` taken for a URL, globbing again.
        static const char one_request[] = "latchkey curl sends one request: --next, -: and --config (-K) are not taken.";
        if (strcmp(a, "--next") == 0 || strcmp(a, "--config") == 0 || strncmp(a, "--config=", 9) == 0) {
            *problem = one_request;
            return -1;
        }
        // `-- URL` at the end (curl takes every argument after `--` for a URL): the URL, and `--` with it.
        if (strcmp(a, "--") == 0 && i == count - 2 && starts_with_http(arguments[i + 1])) {
            url = arguments[++i];
            urls++;
            request->url_at = started;
            request->url_span = 2;
            continue;
        }
        if (strcmp(a, "--") == 0 || strcmp(a, "--no-globoff") == 0) {
            *problem = "latchkey curl sends one request, to the URL named: a second -- (other than one just before the URL, at the end) and --no-globoff are not taken.";
            return -1;
        }
        if (strncmp(a, "--", 2) == 0 && a[2]) {
            const char *equals = strchr(a, '=');
            char name[64];
            size_t n = equals ? (size_t)(equals - a) : strlen(a);
            if (n >= sizeof name) continue;
            memcpy(name, a, n);
            name[n] = 0;
            if (shortened(name)) {
                *problem = "write curl's long options in full: a shortened one could be one latchkey curl must know.";
                return -1;
            }
            if (equals) value = equals + 1;
            else if (in(name, LIST(long_values)) && i + 1 < count) value = arguments[++i];
            if (strcmp(name, "--url") == 0 && value) url = value, urls++, request->url_at = started, request->url_span = i - started + 1;
            else if (strcmp(name, "--request") == 0) asked = value;
            else if (strcmp(name, "--head") == 0) implied = "HEAD";
            else if (strcmp(name, "--upload-file") == 0) implied = "PUT";
            else if (strcmp(name, "--get") == 0) get = 1;
            else if (strncmp(name, "--data", 6) == 0 || strncmp(name, "--form", 6) == 0 || strcmp(name, "--json") == 0)
                implied = strcmp(implied, "GET") == 0 ? "POST" : implied;
            else if (strcmp(name, "--output") == 0 || strcmp(name, "--remote-name") == 0) request->own_output = 1;
            // It holds for the URLs after it, and the early curl's comes from its configuration, read first.
            else if (strcmp(name, "--remote-name-all") == 0) request->own_output = request->in_place = 1;
            request->elsewhere |= in(name, LIST(elsewhere_options));
        } else if (a[0] == '-' && a[1]) {
            // A cluster of short options (-sS, -sXPUT, -sd @body): a value-taking one ends it.
            for (const char *c = a + 1; *c; c++) {
                if (*c == 'K' || *c == ':') {
                    *problem = one_request;
                    return -1;
                }
                if (strchr(short_values, *c)) {
                    value = c[1] ? c + 1 : (i + 1 < count ? arguments[++i] : NULL);
                    if (*c == 'X') asked = value;
                    else if (*c == 'T') implied = "PUT";
                    else if ((*c == 'd' || *c == 'F') && strcmp(implied, "GET") == 0) implied = "POST";
                    else if (*c == 'o') request->own_output = 1;
                    else if (*c == 'w' || *c == 'D') request->elsewhere = 1;
                    break;
                }
                if (*c == 'I') implied = "HEAD";
                else if (*c == 'G') get = 1;
                else if (*c == 'O') request->own_output = 1;
                else if (*c == 'h' || *c == 'V' || *c == 'M') request->elsewhere = 1;
            }
        } else {
            // A plain argument is a URL to curl, whatever it looks like: one without http(s):// would get the token too.
            if (!starts_with_http(a)) {
                *problem = "name the request's URL in full, with https:// (or http:// on this computer).";
                return -1;
            }
            url = a;
            urls++;
            request->url_at = i;
            request->url_span = 1;
        }
        // A file named "-" is standard input or output (-o -, -c -, -T -, --trace -): tried once, as it is.
        if (value && strcmp(value, "-") == 0) request->elsewhere = 1;
    }
    if (urls != 1) {
        *problem = urls ? "latchkey curl sends one request: name one URL." : "name the request's URL (https://…).";
        return -1;
    }
    request->url = url;
    request->method = asked ? asked : (get && strcmp(implied, "HEAD") != 0 ? "GET" : implied);
    return 0;
}

// A memfd holding `text`, its descriptor open across exec (curl reads it as /dev/fd/N); -1 on failure.
static int memory_file(const char *name, const char *text) {
    int fd = memfd_create(name, 0);
    if (fd < 0) return -1;
    size_t length = strlen(text), written = 0;
    while (written < length) {
        ssize_t n = write(fd, text + written, length - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        written += (size_t)n;
    }
    return fd;
}

// All of a memfd's bytes, NUL-terminated, into `out`; the length, or -1 when they do not fit.
static long read_all(int fd, char *out, size_t capacity) {
    size_t total = 0;
    while (total + 1 < capacity) {
        ssize_t n = pread(fd, out + total, capacity - 1 - total, (off_t)total);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += (size_t)n;
    }
    out[total] = 0;
    char probe;
    return pread(fd, &probe, 1, (off_t)total) > 0 ? -1 : (long)total;
}

// The header lines (`Authorization: …` and, for a bound token, `DPoP: …`) for `method` `url` into
// `headers`, from the agent (`named` set: only --provider and --account were given) or from
// `latchkey token --format header`. 0, or the exit status to end with (its sentence said). `early`
// (when given) is started once the agent has the request.
static int token_headers(const char *named, int interactive, int count, char **options, const char *method, const char *url, const char *nonce,
                         char *headers, size_t capacity, struct early_curl *early) {
    static char request[8192], answer[LATCHKEY_AGENT_LARGEST_MESSAGE], token[LATCHKEY_AGENT_LARGEST_MESSAGE];
    if (named) {
        char account[1100], quoted_method[128], quoted_url[4200], quoted_nonce[2100] = "";
        if (agent_answer_quote(named, account, sizeof account) < 0 || agent_answer_quote(method, quoted_method, sizeof quoted_method) < 0 ||
            agent_answer_quote(url, quoted_url, sizeof quoted_url) < 0 ||
            (nonce && agent_answer_quote(nonce, quoted_nonce, sizeof quoted_nonce) < 0)) {
            named = NULL;  // the app says what is wrong with them
        } else {
            int written = snprintf(request, sizeof request,
                                   "{\"request\":\"access_token\",\"account\":%s,\"min_valid_period\":0,\"application_hint\":\"latchkey "
                                   "curl\",\"dpop_method\":%s,\"dpop_url\":%s%s%s%s}",
                                   account, quoted_method, quoted_url, nonce ? ",\"dpop_nonce\":" : "", quoted_nonce,
                                   interactive ? "" : ",\"interactive\":false");
            if (written < 0 || written >= (int)sizeof request) named = NULL;
        }
    }
    long length = named ? ask_agent(request, answer, sizeof answer, early ? early_curl_start : NULL, early) : -1;
    if (length == AGENT_SILENT) {
        fprintf(stderr, "latchkey: Latchkey's agent did not answer in time.\n");
        return FAILED;
    }
    if (length >= 0) {
        char type[64], proof[8192] = "";
        int ended = agent_token(answer, length, token, sizeof token, type, sizeof type);
        if (ended != 0) return ended;
        if (strcasecmp(type, "dpop") == 0 && agent_answer_string(answer, (size_t)length, "dpop_proof", proof, sizeof proof) <= 0) {
            fprintf(stderr, "latchkey: Latchkey's agent gave a token bound to a key without the proof that goes with it.\n");
            return FAILED;
        }
        if (!visible_ascii(proof)) {  // as the token: no second header line, no raw carriage return
            fprintf(stderr, "latchkey: Latchkey's agent answered a proof with spaces, line breaks, control or non-ASCII characters.\n");
            return FAILED;
        }
        int written = snprintf(headers, capacity, "Authorization: %s %s\n%s%s%s", type, token, *proof ? "DPoP: " : "", proof, *proof ? "\n" : "");
        return written > 0 && (size_t)written < capacity ? 0 : FAILED;
    }
    // No agent to ask (or more than a provider and an account to say): `latchkey token` does it all.
    char app[PATH_MAX];
    if (program_path("latchkey-app", app, sizeof app) != 0) {
        fprintf(stderr, "latchkey: its app (latchkey-app) is not beside it, nor in ../lib/latchkey: install Latchkey again.\n");
        return FAILED;
    }
    char *argv[MOST_ARGUMENTS + 16];  // curl_command holds options to MOST_ARGUMENTS
    int n = 0;
    argv[n++] = "latchkey";
    argv[n++] = "token";
    for (int i = 0; i < count; i++) argv[n++] = options[i];
    // Each value joined to its option: a nonce (base64url) may begin with "-", which would be read as an option.
    static char url_option[4200], method_option[64], nonce_option[1200];
    snprintf(url_option, sizeof url_option, "--dpop-url=%s", url);
    snprintf(method_option, sizeof method_option, "--dpop-method=%s", method);
    argv[n++] = "--format=header";
    argv[n++] = url_option;
    argv[n++] = method_option;
    if (nonce) {
        snprintf(nonce_option, sizeof nonce_option, "--dpop-nonce=%s", nonce);
        argv[n++] = nonce_option;
    }
    argv[n] = NULL;
    int output = memfd_create("latchkey-token", MFD_CLOEXEC);
    if (output < 0) return FAILED;
    int status = run(app, argv, output);
    long read = status == 0 ? read_all(output, headers, capacity) : -1;
    close(output);
    if (status != 0) return status < 0 ? FAILED : status;  // its sentence is said
    if (read <= 0) fprintf(stderr, "latchkey: latchkey token printed no token, or more than a token and its proof.\n");
    return read > 0 ? 0 : FAILED;
}

// The status of the last answer in curl's header dump (redirects and 100 Continue come first), and
// the nonce it asks for: set when it is 401 with a DPoP challenge's use_dpop_nonce and a DPoP-Nonce.
static int last_answer(char *dump, char *nonce, size_t capacity) {
    int status = 0, asks = 0;
    *nonce = 0;
    for (char *line = strtok(dump, "\r\n"); line; line = strtok(NULL, "\r\n")) {
        if (strncmp(line, "HTTP/", 5) == 0) {
            const char *space = strchr(line, ' ');
            status = space ? atoi(space + 1) : 0;
            asks = 0;
            *nonce = 0;
        } else if (strncasecmp(line, "www-authenticate:", 17) == 0 && strcasestr(line, "dpop") && strstr(line, "use_dpop_nonce")) {
            asks = 1;
        } else if (strncasecmp(line, "dpop-nonce:", 11) == 0) {
            const char *value = line + 11;
            while (*value == ' ' || *value == '\t') value++;
            size_t length = strlen(value);
            while (length && (value[length - 1] == ' ' || value[length - 1] == '\t')) length--;
            if (length < capacity) {
                memcpy(nonce, value, length);
                nonce[length] = 0;
            }
        }
    }
    if (status != 401 || !asks) *nonce = 0;
    return status;
}

// curl run with `headers` (in a memfd, -H @/dev/fd/N): becoming it, or for a bound token's first try
// (`proved`), its answer and header lines kept aside in `kept`'s memfds (made here when it has none). What it ended
// with; -1 when it could not be run (said).
static int run_curl(const char *headers, int proved, const struct request *request, int count, char **arguments, struct early_curl *kept) {
    int header_file = memory_file("latchkey-curl-headers", headers);
    if (header_file < 0) return -1;
    if (proved && kept->body < 0) kept->body = memfd_create("latchkey-curl-body", MFD_CLOEXEC);
    if (proved && kept->dumped < 0) kept->dumped = memfd_create("latchkey-curl-dump", 0);
    if (proved && (kept->body < 0 || kept->dumped < 0)) return -1;
    if (proved && fcntl(kept->dumped, F_SETFD, 0) != 0) return -1;  // curl's to write to (one made for the early curl is not)
    char header_argument[32], dump_path[32];
    snprintf(header_argument, sizeof header_argument, "@/dev/fd/%d", header_file);
    snprintf(dump_path, sizeof dump_path, "/dev/fd/%d", kept->dumped);
    char *curl[MOST_ARGUMENTS + 12];
    int n = 0;
    curl[n++] = "curl";
    curl[n++] = "--globoff";  // the URL is the one the proof is for, never a pattern of several
    curl[n++] = "-H";
    curl[n++] = header_argument;
    if (proved) {
        curl[n++] = "-D";
        curl[n++] = dump_path;
        // Its output goes to a file first: no progress meter where curl would show none, on a terminal.
        if (!request->own_output && isatty(STDOUT_FILENO)) curl[n++] = "--no-progress-meter";
    }
    for (int i = 0; i < count; i++) curl[n++] = arguments[i];
    curl[n] = NULL;
    if (!proved) {
        execvp("curl", curl);
        say_no_curl();
        return -1;
    }
    int status = run("curl", curl, kept->body);
    close(header_file);
    if (status == 127 || status < 0) {
        say_no_curl();
        return -1;
    }
    return status;
}

// Whether the answer whose header lines curl wrote to `dumped` asks for a nonce (put in `nonce`).
static int resource_asks_nonce(int dumped, char *nonce, size_t capacity) {
    static char dump[65536];
    long length = read_all(dumped, dump, sizeof dump);
    return length >= 0 && last_answer(dump, nonce, capacity) == 401 && *nonce;
}

// The answer as curl wrote it to `body`, onto standard output; 0, or 23 (curl's "write error") when
// it could not all be written there.
static int copy_out(int body) {
    struct stat size;
    off_t offset = 0;
    if (fstat(body, &size) != 0) return 23;
    while (offset < size.st_size) {
        char chunk[65536];
        ssize_t got = pread(body, chunk, sizeof chunk, offset);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 23;
        for (ssize_t sent = 0; sent < got;) {
            ssize_t n = write(STDOUT_FILENO, chunk + sent, (size_t)(got - sent));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return 23;
            sent += n;
        }
        offset += got;
    }
    return 0;
}

int curl_command(int argc, char **argv) {
    signal(SIGCHLD, SIG_DFL);  // one ignored where this started would leave curl's status unknown
    // Latchkey's options first (up to `--`, or the first that is none of them), then curl's.
    int first = 2, others = 0, no_interaction = 0;
    const char *provider = NULL, *account = NULL;
    while (first < argc && strcmp(argv[first], "--") != 0) {
        int i = first;
        const char *value;
        if (strcmp(argv[i], "--no-interaction") == 0) no_interaction = 1;
        else if ((value = option(argc, argv, &i, "--provider"))) provider = value;
        else if ((value = option(argc, argv, &i, "--account"))) account = value;
        else if (token_option(argc, argv, &i)) others = 1;
        else break;
        first = i + 1;
    }
    int options = first - 2;
    if (first < argc && strcmp(argv[first], "--") == 0) first++;
    int count = argc - first;
    const char *problem = NULL;
    struct request request = {0};
    if (options + count > MOST_ARGUMENTS || curl_request(count, argv + first, &request, &problem) != 0) request.url = NULL;
    if (request.url && strlen(request.url) > 4096) request.url = NULL, problem = "the URL is longer than Latchkey signs proofs for (4096 bytes).";
    if (!request.url) {
        fprintf(stderr,
                "latchkey: %s\n"
                "usage: latchkey curl [--provider ID | --resource URL] [latchkey token's options] [--] [curl's options] URL\n",
                problem ? problem : "too many arguments.");
        return 64;  // EX_USAGE, as the app ends a mistake on the command line
    }
    char named[512];
    // Asked of the agent here, when only a provider (and an account) are named, and the URL is one the agent takes.
    int direct = provider && !others && !strchr(provider, '/') && (!account || *account) && strlen(request.url) <= 2000;
    if (direct) {
        int written = account ? snprintf(named, sizeof named, "%s/%s", provider, account) : snprintf(named, sizeof named, "%s", provider);
        if (written < 0 || written >= (int)sizeof named) direct = 0;
    }
    static char headers[2 * LATCHKEY_AGENT_LARGEST_MESSAGE];
    char nonce[1100];
    // Asking the agent, curl is started with its arguments, its URL and header lines to come in its
    // configuration; with the memfds a bound token's first try is kept aside in, should that be the answer.
    static char *early_argv[MOST_ARGUMENTS + 12];
    struct early_curl early = {.argv = early_argv, .url = request.url, .body = -1, .dumped = -1};
    int n = 0;
    early_argv[n++] = "curl";
    early_argv[n++] = "--globoff";
    early_argv[n++] = "-K";
    early_argv[n++] = early.configuration;
    // The URL's place is kept, by a flag already given: an option before it that curl takes a value
    // for (one the front does not know) takes the same argument as it would have.
    for (int i = 0; i < count; i++)
        early_argv[n++] = i < request.url_at || i >= request.url_at + request.url_span ? argv[first + i] : "--globoff";
    early_argv[n] = NULL;
    if (direct && !request.elsewhere) {
        early.body = memfd_create("latchkey-curl-body", MFD_CLOEXEC);
        early.dumped = memfd_create("latchkey-curl-dump", MFD_CLOEXEC);
    }
    for (int attempt = 1;; attempt++) {
        int ended = token_headers(direct ? named : NULL, may_ask(no_interaction), options, argv + 2, request.method, request.url,
                                  attempt == 1 ? NULL : nonce, headers, sizeof headers, direct && !request.in_place && attempt == 1 ? &early : NULL);
        // A bound token's first try is kept aside: should the resource ask for its nonce, it is tried again.
        int proved = ended == 0 && strstr(headers, "\nDPoP: ") != NULL && attempt == 1;
        int status;
        if (early.pid > 0 && ended == 0 && !proved) return ending(early_curl_run(&early, headers, 0, 0));
        if (early.pid > 0 && ended == 0 && early.body >= 0 && early.dumped >= 0) {
            int waited = early_curl_run(&early, headers, 1, request.own_output);
            if (waited < 0 || (WIFEXITED(waited) && WEXITSTATUS(waited) == 127)) return ending(waited);
            status = exit_status(waited);
        } else {
            early_curl_end(&early);
            if (ended != 0) return ended;
            status = run_curl(headers, proved, &request, count, argv + first, &early);
            if (status < 0) return FAILED;
        }
        if (!resource_asks_nonce(early.dumped, nonce, sizeof nonce)) {
            if (!request.own_output && copy_out(early.body) != 0 && status == 0) status = 23;
            return status;
        }
        close(early.body);
        close(early.dumped);
        early.body = early.dumped = -1;
    }
}
