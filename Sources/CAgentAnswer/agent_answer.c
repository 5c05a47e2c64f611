#include "agent_answer.h"

#include <string.h>

// A cursor over the JSON text; every read checks the end.
typedef struct {
    const char *p;
    const char *end;
} cursor;

static void spaces(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int hex4(cursor *c, unsigned *value) {
    if (c->end - c->p < 4) return -1;
    *value = 0;
    for (int i = 0; i < 4; i++) {
        char h = *c->p++;
        *value <<= 4;
        if (h >= '0' && h <= '9') *value |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f') *value |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') *value |= (unsigned)(h - 'A' + 10);
        else return -1;
    }
    return 0;
}

static int put(char *out, size_t capacity, size_t *n, unsigned char byte) {
    if (out && *n + 1 >= capacity) return -1;
    if (out) out[*n] = (char)byte;
    (*n)++;
    return 0;
}

static int put_utf8(char *out, size_t capacity, size_t *n, unsigned scalar) {
    if (scalar < 0x80) return put(out, capacity, n, (unsigned char)scalar);
    if (scalar < 0x800)
        return put(out, capacity, n, (unsigned char)(0xC0 | scalar >> 6)) | put(out, capacity, n, (unsigned char)(0x80 | (scalar & 0x3F)));
    if (scalar < 0x10000)
        return put(out, capacity, n, (unsigned char)(0xE0 | scalar >> 12)) |
               put(out, capacity, n, (unsigned char)(0x80 | ((scalar >> 6) & 0x3F))) |
               put(out, capacity, n, (unsigned char)(0x80 | (scalar & 0x3F)));
    return put(out, capacity, n, (unsigned char)(0xF0 | scalar >> 18)) |
           put(out, capacity, n, (unsigned char)(0x80 | ((scalar >> 12) & 0x3F))) |
           put(out, capacity, n, (unsigned char)(0x80 | ((scalar >> 6) & 0x3F))) |
           put(out, capacity, n, (unsigned char)(0x80 | (scalar & 0x3F)));
}

// Reads a string literal at the cursor; decoded into out (NULL: skipped). Returns its length or -1.
static long string(cursor *c, char *out, size_t capacity) {
    if (c->p >= c->end || *c->p != '"') return -1;
    c->p++;
    size_t n = 0;
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '"') {
            if (out) out[n] = 0;
            return (long)n;
        }
        if (ch < 0x20) return -1;
        if (ch != '\\') {
            if (put(out, capacity, &n, ch)) return -1;
            continue;
        }
        if (c->p >= c->end) return -1;
        char escape = *c->p++;
        unsigned scalar;
        switch (escape) {
        case '"': case '\\': case '/': scalar = (unsigned char)escape; break;
        case 'b': scalar = '\b'; break;
        case 'f': scalar = '\f'; break;
        case 'n': scalar = '\n'; break;
        case 'r': scalar = '\r'; break;
        case 't': scalar = '\t'; break;
        case 'u':
            if (hex4(c, &scalar)) return -1;
            if (scalar >= 0xD800 && scalar <= 0xDBFF) {
                unsigned low;
                if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u') {
                    scalar = 0xFFFD;  // a lone half, as the agent's own reader takes it
                    break;
                }
                c->p += 2;
                if (hex4(c, &low) || low < 0xDC00 || low > 0xDFFF) return -1;
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00);
            } else if (scalar >= 0xDC00 && scalar <= 0xDFFF) {
                scalar = 0xFFFD;
            }
            break;
        default: return -1;
        }
        if (scalar == 0 || put_utf8(out, capacity, &n, scalar)) return -1;  // no NUL inside a C string
    }
    return -1;
}

// Skips one value the agent writes: a string, a number, true/false/null. Objects and arrays are
// not in its answers, and refuse the whole answer.
static int skip_value(cursor *c) {
    spaces(c);
    if (c->p >= c->end) return -1;
    if (*c->p == '"') return string(c, NULL, 0) < 0 ? -1 : 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ' ') c->p++;
    return c->p > start ? 0 : -1;
}

// Finds member `key` of the top-level object; the cursor is left on its value.
static int find(cursor *c, const char *key) {
    spaces(c);
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    char name[64];
    for (;;) {
        spaces(c);
        if (c->p < c->end && *c->p == '}') return -1;
        long length = string(c, name, sizeof name);
        spaces(c);
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        spaces(c);
        if (length >= 0 && strcmp(name, key) == 0) return 0;
        if (skip_value(c)) return -1;
        spaces(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        return -1;
    }
}

long agent_answer_string(const char *json, size_t length, const char *key, char *out, size_t capacity) {
    cursor c = {json, json + length};
    if (capacity == 0 || find(&c, key)) return -1;
    return string(&c, out, capacity);
}

long long agent_answer_number(const char *json, size_t length, const char *key) {
    cursor c = {json, json + length};
    if (find(&c, key)) return -1;
    long long value = 0;
    int digits = 0;
    while (c.p < c.end && *c.p >= '0' && *c.p <= '9' && digits < 18) {
        value = value * 10 + (*c.p++ - '0');
        digits++;
    }
    if (digits == 0 || (c.p < c.end && *c.p != ',' && *c.p != '}')) return -1;
    return value;
}

long agent_answer_quote(const char *text, char *out, size_t capacity) {
    static const char digits[] = "0123456789abcdef";
    size_t n = 0;
    if (put(out, capacity, &n, '"')) return -1;
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s == '"' || *s == '\\') {
            if (put(out, capacity, &n, '\\') || put(out, capacity, &n, *s)) return -1;
        } else if (*s < 0x20) {
            if (put(out, capacity, &n, '\\') || put(out, capacity, &n, 'u') || put(out, capacity, &n, '0') ||
                put(out, capacity, &n, '0') || put(out, capacity, &n, (unsigned char)digits[*s >> 4]) ||
                put(out, capacity, &n, (unsigned char)digits[*s & 15]))
                return -1;
        } else if (put(out, capacity, &n, *s)) {
            return -1;
        }
    }
    if (put(out, capacity, &n, '"')) return -1;
    out[n] = 0;
    return (long)n;
}
