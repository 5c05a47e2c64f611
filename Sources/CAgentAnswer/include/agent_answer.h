// Reading the agent's answer in C, for `latchkey`'s front (Sources/LatchkeyFront):
// the agent writes one compact JSON object (OIDCAgentMessage), and the front needs
// a few of its string members, unescaped, without a JSON library at start-up.
#ifndef LATCHKEY_AGENT_ANSWER_H
#define LATCHKEY_AGENT_ANSWER_H

#include <stddef.h>

/// The string member `key` of the top-level JSON object in `json` (`length` bytes), decoded
/// (escapes, \u with surrogate pairs as UTF-8) into `out` (`capacity` bytes, NUL-terminated).
/// Returns its length, or -1 when there is no such string member, the JSON is not an object
/// the agent would write, or it does not fit.
long agent_answer_string(const char *json, size_t length, const char *key, char *out, size_t capacity);

/// The whole-number member `key` (e.g. "expires_at"), or -1 when absent or not a whole number.
long long agent_answer_number(const char *json, size_t length, const char *key);

/// `text` as a JSON string literal (quotes included) into `out`; -1 when it does not fit.
long agent_answer_quote(const char *text, char *out, size_t capacity);

#endif
