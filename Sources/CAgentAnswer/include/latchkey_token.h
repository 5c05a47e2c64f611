// What `latchkey token` and the agent's socket promise the programs that use them, in one place:
// the C front (Sources/LatchkeyFront) includes this header and the app and the agent import it
// (AgentCore, TokenCommand), so that the two ends of the front cannot say different things.
#ifndef LATCHKEY_TOKEN_H
#define LATCHKEY_TOKEN_H

/// `latchkey token`'s exit statuses, whichever of the front or the app answers (0: the token
/// was printed). Scripts branch on them: a number here never changes meaning.
#if defined(__clang__)
/* Clang (Swift's importer, and the toolchain's compiler the front is built with): a closed enum of
 * int, which Swift imports as `LatchkeyTokenExit: Int32` with a case each; another compiler, a plain enum. */
#define LATCHKEY_CLOSED_ENUM(name) enum __attribute__((enum_extensibility(closed))) name : int
#else
#define LATCHKEY_CLOSED_ENUM(name) enum name
#endif
typedef LATCHKEY_CLOSED_ENUM(LatchkeyTokenExit) {
    /// Anything else: the network, the provider, the configuration, the keyring, a busy agent.
    LatchkeyTokenExitFailed = 1,
    /// No sign-in is stored, or the provider no longer accepts it.
    LatchkeyTokenExitSignedOut = 3,
    /// A sign-in was started and did not finish: cancelled, denied, its window closed.
    LatchkeyTokenExitSignInUnfinished = 4,
    /// The person did not allow the program that ran the command (the agent asked them).
    LatchkeyTokenExitRefused = 5,
    /// A person would have had to act (allow the program, or sign in), and nobody may be asked:
    /// --no-interaction, CI=true, git's credential.interactive=false, or no display and no terminal.
    LatchkeyTokenExitNeedsPerson = 6,
} LatchkeyTokenExit;

/// The `kind` member of a failure the agent writes on its socket (beside oidc-agent's
/// `error` sentence): why it gave no token, for a program to act on.
/// The person said no, or could not be asked.
#define LATCHKEY_REFUSAL_DENIED "Denied"
/// No sign-in, or the provider no longer accepts it: sign in again.
#define LATCHKEY_REFUSAL_SIGNED_OUT "SignedOut"
/// The person would have had to be asked, and the program said nobody may be (`interactive` false).
#define LATCHKEY_REFUSAL_NEEDS_PERSON "NeedsPerson"
/// The request itself is wrong: no such provider, an unknown request, a malformed message.
#define LATCHKEY_REFUSAL_INVALID "Invalid"
/// Anything else: the network, the provider, the store.
#define LATCHKEY_REFUSAL_FAILED "Failed"

/// The largest request the agent reads on its socket (bytes; a longer one is refused), and the
/// most of an answer the front reads.
#define LATCHKEY_AGENT_LARGEST_MESSAGE 65536
/// How long a connection may wait for its answer (seconds): as long as the person may take to
/// answer the agent's question, with room to spare.
#define LATCHKEY_AGENT_CONNECTION_LIFETIME 600

/// What `latchkey token` says on stderr of a token bound to a DPoP key (RFC 9449) when no proof was asked for.
// One literal, so that Swift imports it.
#define LATCHKEY_DPOP_NOTE "latchkey: this token is bound to a key Latchkey holds (token_type DPoP): a resource takes it only with a proof of that key. Ask for one with --dpop-url URL (and --dpop-method), or send the request with `latchkey curl`.\n"

#endif
