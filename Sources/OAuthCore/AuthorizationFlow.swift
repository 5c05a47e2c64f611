import Foundation
import Synchronization

/// One sign-in in progress between OAuthCore and a user agent. It ends once:
/// with a checked `AuthorizationResponse`, or with an error.
public final class AuthorizationFlow: Sendable {
    public let request: AuthorizationRequest

    private enum State {
        case waiting([CheckedContinuation<AuthorizationResponse, any Error>])
        case finished(Result<AuthorizationResponse, OAuthError>)
    }

    private let state = Mutex<State>(.waiting([]))

    public init(request: AuthorizationRequest) {
        self.request = request
    }

    public var authorizationURL: URL { request.url }

    /// Whether the flow has ended (with a response or an error); false while it waits for the provider.
    public var isFinished: Bool {
        state.withLock { if case .finished = $0 { true } else { false } }
    }

    /// Offers a navigation. True means it was the redirect URI: the flow has
    /// taken it (successfully or not) and the agent must not load it.
    /// `method` is the navigation's HTTP method: an answer posted as a form
    /// (`response_mode=form_post`) ends the flow with a sentence that says so,
    /// since a user agent that sees only addresses cannot read its fields.
    @discardableResult
    public func resume(with url: URL, method: String = "GET") -> Bool {
        guard RedirectMatcher(redirectURI: request.redirectURI).matches(url) else { return false }
        guard method.uppercased() == "GET" else {
            finish(.failure(.answerPosted))
            return true
        }
        do {
            finish(.success(try AuthorizationResponse(redirectURL: url, for: request)))
        } catch let error as OAuthError {
            // A wrong state ends the flow too: waiting on would leave the person
            // looking at a page that never moves.
            finish(.failure(error))
        } catch {
            finish(.failure(.userAgent(String(describing: error))))
        }
        return true
    }

    /// For a listener anyone on this computer can reach, such as a loopback port
    /// (RFC 8252 §8.3): a request ends the flow only when it is a GET to the
    /// redirect URI carrying this attempt's state, exactly once. Anything else —
    /// another path, no state, a wrong or repeated one, another method — is
    /// refused and the flow waits on, so a page that only knows the port can
    /// neither end the sign-in nor put words in front of the person.
    /// True: the flow took the request (successfully or not).
    public func resumeFromListener(with url: URL, method: String) -> Bool {
        guard method.uppercased() == "GET", !isFinished, RedirectMatcher(redirectURI: request.redirectURI).matches(url),
            let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery,
            let pairs = FormCoding.decode(query)
        else { return false }
        let states = pairs.filter { $0.0 == "state" }.map(\.1)
        guard states.count == 1, constantTimeEquals(states[0], request.state) else { return false }
        return resume(with: url, method: method)
    }

    /// Whether the flow ended with a response (true) or an error (false); nil while it waits.
    public var succeeded: Bool? {
        state.withLock { state in
            guard case .finished(let result) = state else { return nil }
            if case .success = result { return true }
            return false
        }
    }

    /// The person closed the sign-in window.
    public func cancel() {
        finish(.failure(.cancelled))
    }

    /// The user agent broke: the page failed to load, a bad certificate, a crashed renderer.
    public func fail(_ error: OAuthError) {
        finish(.failure(error))
    }

    /// Waits for the outcome.
    public func response() async throws -> AuthorizationResponse {
        try await withCheckedThrowingContinuation { continuation in
            let finished: Result<AuthorizationResponse, OAuthError>? = state.withLock { state in
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

    private func finish(_ result: Result<AuthorizationResponse, OAuthError>) {
        let waiting: [CheckedContinuation<AuthorizationResponse, any Error>] = state.withLock { state in
            guard case .waiting(let waiting) = state else { return [] }
            state = .finished(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: result) }
    }
}
