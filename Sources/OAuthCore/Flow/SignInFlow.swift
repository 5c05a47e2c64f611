import FoundationEssentials
import Synchronization

/// A sign-in waiting on the person, as a user agent sees it: a page to show, an
/// address that means "the provider has answered", and the ways it can end.
/// OAuth 2.0's `AuthorizationFlow` and OAuth 1.0a's `OAuth1Flow` are both one,
/// so the embedded view and the browser serve either without knowing which.
public protocol SignInFlow: AnyObject, Sendable {
    /// The provider's page to show.
    var authorizationURL: URL { get }
    /// Where the provider sends the person back: the navigation the agent hands over and never loads.
    var redirectURI: URL { get }
    /// Whether the flow has ended (with an answer or an error).
    var isFinished: Bool { get }
    /// Whether it ended with an answer (true) or an error (false); nil while it waits.
    var succeeded: Bool? { get }
    /// Offers a navigation. True means it was the redirect URI: the flow has
    /// taken it (successfully or not) and the agent must not load it.
    @discardableResult func resume(with url: URL, method: String) -> Bool
    /// For a listener anyone on this computer can reach: only a GET to the redirect
    /// URI that carries this attempt's own binding (OAuth 2's state, OAuth 1's
    /// request token), exactly once, is taken; anything else is refused and the flow waits on.
    func resumeFromListener(with url: URL, method: String) -> Bool
    /// The person closed the sign-in window.
    func cancel()
    /// The user agent broke.
    func fail(_ error: OAuthError)
}

extension SignInFlow {
    @discardableResult public func resume(with url: URL) -> Bool { resume(with: url, method: "GET") }
}

/// One answer, given once, to any number of waiters: what a flow ends with.
final class FlowOutcome<Value: Sendable>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Value, any Error>])
        case finished(Result<Value, OAuthError>)
    }

    private let state = Mutex<State>(.waiting([]))

    var isFinished: Bool {
        state.withLock { if case .finished = $0 { true } else { false } }
    }

    var succeeded: Bool? {
        state.withLock { state in
            guard case .finished(let result) = state else { return nil }
            if case .success = result { return true }
            return false
        }
    }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let finished: Result<Value, OAuthError>? = state.withLock { state in
                switch state {
                case .waiting(let waiting):
                    state = .waiting(waiting + [continuation])
                    return nil
                case .finished(let result):
                    return result
                }
            }
            if let finished { continuation.resume(with: finished) }
        }
    }

    /// Ends the wait; later calls change nothing.
    func finish(_ result: Result<Value, OAuthError>) {
        let waiting: [CheckedContinuation<Value, any Error>] = state.withLock { state in
            guard case .waiting(let waiting) = state else { return [] }
            state = .finished(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: result) }
    }

    /// A navigation offered to a flow waiting on `redirectURI`: false when it goes elsewhere;
    /// else the flow ends with what `read` makes of it (or, posted, with a sentence saying a
    /// posted answer cannot be read) and true.
    func resume(with url: URL, method: String, redirectURI: URL, read: () throws -> Value) -> Bool {
        guard RedirectMatcher(redirectURI: redirectURI).matches(url) else { return false }
        guard method.uppercased() == "GET" else {
            finish(.failure(.answerPosted))
            return true
        }
        finish(reading: read)
        return true
    }

    /// Whether a request to a listener anyone on this computer can reach may be offered
    /// at all: a GET to `redirectURI`, while the flow waits, whose query names exactly one
    /// of `names` (the attempt's binding), and that one `isOurs`.
    func listenerMayOffer(_ url: URL, method: String, redirectURI: URL, names: Set<String>, isOurs: (String) -> Bool) -> Bool {
        guard let pairs = listenerQuery(url, method: method, redirectURI: redirectURI) else { return false }
        let named = pairs.filter { names.contains($0.name) }
        return named.count == 1 && isOurs(named[0].value)
    }

    /// The query of a request to the listener that may be offered at all: a GET to
    /// `redirectURI` while the flow waits. Nil for anything else.
    func listenerQuery(_ url: URL, method: String, redirectURI: URL) -> [(name: String, value: String)]? {
        guard method.uppercased() == "GET", !isFinished, RedirectMatcher(redirectURI: redirectURI).matches(url),
            let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery
        else { return nil }
        return FormCoding.decode(query)
    }

    /// Ends with what `read` makes of the answer, or with its error.
    private func finish(reading read: () throws -> Value) {
        do {
            finish(.success(try read()))
        } catch let error as OAuthError {
            // A wrong binding ends the flow too: waiting on would leave the person
            // looking at a page that never moves.
            finish(.failure(error))
        } catch {
            finish(.failure(.userAgent(String(describing: error))))
        }
    }
}

/// Set once: the first `take()` answers true, every later one false.
final class OnceFlag: Sendable {
    private let taken = Mutex(false)

    func take() -> Bool {
        taken.withLock { done in
            defer { done = true }
            return !done
        }
    }

    var isTaken: Bool { taken.withLock { $0 } }
}
