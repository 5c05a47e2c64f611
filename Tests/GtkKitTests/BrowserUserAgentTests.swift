import CGtk
import DesktopOAuth
import Foundation
import GtkKit
import OAuthCore
import TestSupport
import Testing

@testable import DesktopOAuth

/// The loopback listener of the browser user agent, spoken to over real HTTP
/// (curl) while GTK's loop turns on this thread. What a page that only knows
/// the port can do: nothing; what the provider's redirect does: end the sign-in once.
@MainActor
@Suite(.serialized) struct BrowserUserAgentTests {
    let configuration: ProviderConfiguration

    init() throws {
        try #require(gtk_init_check(nil, nil) != 0, "GTK needs a display: run under scripts/with-xvfb.sh, as make test does")
        configuration = try ProviderConfiguration(
            id: "loopback-test", displayName: "Loopback test",
            authorizationEndpoint: URL(string: "http://127.0.0.1:9/authorize")!,
            tokenEndpoint: URL(string: "http://127.0.0.1:9/token")!, clientID: "client",
            redirectURI: URL(string: "http://127.0.0.1/callback")!, scopes: ["profile"], userAgents: [.browser])
    }

    // Each test makes its own window (the agent's parent): GTK objects are released on
    // GTK's thread, and a suite's stored properties are not.

    /// A listener and a flow waiting on it, as `AuthSession.signIn` sets them up (without opening a browser).
    private func waitingFlow(_ agent: BrowserUserAgent) throws -> (AuthorizationFlow, URL) {
        let redirect = try agent.listen(for: configuration.redirectURI)
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: configuration, redirectURI: redirect))
        try agent.accept(flow)
        return (flow, redirect)
    }

    /// Runs `work` off this thread while GTK's loop turns here, as it does in the app.
    private func whileLoopTurns<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let done = Flag()
        let result = Locked<Result<T, any Error>?>(nil)
        Task.detached {
            let outcome = await outcome { try await work() }
            result.set(outcome)
            done.set()
        }
        while !done.isSet { g_main_context_iteration(nil, 1) }
        return try result.get()!.get()
    }

    @Test func onlyOurRedirectEndsTheSignInAndOnlyOnce() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"))
        let (flow, redirect) = try waitingFlow(agent)
        #expect(redirect.host == "127.0.0.1" && redirect.path == "/callback" && (redirect.port ?? 0) > 0)
        let base = "http://127.0.0.1:\(redirect.port!)"
        let state = flow.request.state
        let client = HTTPClient()
        let refused = try whileLoopTurns {
            [
                try await client.get("\(base)/").status,
                try await client.get("\(base)/favicon.ico").status,
                // A page that knows only the port: no state, a wrong one, two, a posted answer.
                try await client.get("\(base)/callback?code=forged").status,
                try await client.get("\(base)/callback?code=forged&state=guess").status,
                try await client.get("\(base)/callback?code=forged&state=\(state)&state=\(state)").status,
                try await client.send(method: "POST", "\(base)/callback?code=forged&state=\(state)", headers: [:], body: Data()).status,
                try await client.get("\(base)/callback/more?code=forged&state=\(state)").status,
                // The right state under another host name (DNS rebinding): not the redirect URI.
                try await client.get("\(base)/callback?code=forged&state=\(state)", headers: ["Host": "evil.example"]).status,
            ]
        }
        #expect(refused == Array(repeating: 404, count: refused.count))
        #expect(!flow.isFinished, "nothing so far could end the sign-in")

        let (answer, second) = try whileLoopTurns {
            let answer = try await client.get("\(base)/callback?code=the-code&state=\(state)")
            return (answer, try await client.get("\(base)/callback?code=other&state=\(state)"))
        }
        #expect(answer.status == 200)
        #expect(answer.text.contains("finishes the sign-in") && !answer.text.contains("the-code") && !answer.text.contains(state))
        #expect(answer.header("Cache-Control") == "no-store" && answer.header("Referrer-Policy") == "no-referrer")
        #expect(answer.header("Content-Security-Policy")?.hasPrefix("default-src 'none'") == true)
        #expect(answer.header("Connection") == "close")
        #expect(second.status == 404, "a second redirect finds the sign-in over")
        let response = try whileLoopTurns { try await flow.response() }
        #expect(response.code == "the-code")

        agent.close(flow)
        #expect(agent.port == nil)
        try expectClosed(port: redirect.port!)
    }

    @Test func aRefusalInTheBrowserEndsAsCancelledAndSaysSoInTheTab() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"))
        let (flow, redirect) = try waitingFlow(agent)
        let page = try whileLoopTurns {
            try await HTTPClient().get(
                "http://127.0.0.1:\(redirect.port!)/callback?error=access_denied&state=\(flow.request.state)")
        }
        #expect(page.status == 200 && page.text.contains("did not complete"))
        #expect(flow.succeeded == false)
        let result: Result<AuthorizationResponse, any Error> = try whileLoopTurns { await outcome { try await flow.response() } }
        #expect(throws: OAuthError.cancelled) { try result.get() }
        agent.close(flow)
        try expectClosed(port: redirect.port!)
    }

    @Test func cancellingClosesThePortAtOnce() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"))
        let (flow, redirect) = try waitingFlow(agent)
        flow.cancel()
        agent.close(flow)
        try expectRefused(port: redirect.port!)
    }

    /// A browser opens connections it may never use (a speculative pre-connection): one that sends
    /// nothing is not an answer being written, and must not keep the port open once the sign-in ends.
    @Test func anIdleConnectionDoesNotKeepThePortOpen() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"))
        let (flow, redirect) = try waitingFlow(agent)
        let port = redirect.port!
        let idle = try #require(IdleConnection(port: port))
        // Accepted by the listener (its end of the connection has a descriptor in this process).
        _ = try whileLoopTurns {
            try await waitUntil {
                PortSockets.describe(port: port).contains("127.0.0.1:\(port) → 127.0.0.1:\(idle.localPort) ESTABLISHED, held")
            }
        }
        flow.cancel()
        agent.close(flow)
        // Straight away: no turn of the loop, no second of grace for an answer nobody is writing.
        try expectRefused(port: port)
        withExtendedLifetime(idle) {}
    }

    /// The port refuses at once even while another descriptor of the listening socket exists — a
    /// program another thread is starting holds one until its exec. Closed only, the socket went on
    /// listening: a connection waited there unanswered and was reset when the copy went (seen twice
    /// beside a CPU hog, as curl's "connection reset by peer" in expectClosed).
    @Test func aCopyOfTheListeningSocketInAChildDoesNotKeepThePortOpen() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"))
        let (flow, redirect) = try waitingFlow(agent)
        let port = redirect.port!
        let copy = try #require(ListeningSocketCopy(port: port))
        flow.cancel()
        agent.close(flow)
        try expectRefused(port: port)
        withExtendedLifetime(copy) {}
    }

    @Test func noAnswerWithinTheTimeoutFailsTheSignInWithASentence() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"), timeout: .seconds(1))
        let (flow, _) = try waitingFlow(agent)
        let result: Result<AuthorizationResponse, any Error> = try whileLoopTurns { await outcome { try await flow.response() } }
        #expect(throws: OAuthError.browser("no answer came back from your browser within 1 second. Try again.")) {
            try result.get()
        }
        agent.close(flow)
    }

    @Test func aSecondSignInWaitsForTheFirstToEnd() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"))
        let (flow, _) = try waitingFlow(agent)
        #expect(throws: OAuthError.self) { try agent.listen(for: configuration.redirectURI) }
        agent.close(flow)
        let again = try agent.listen(for: configuration.redirectURI)
        #expect(agent.port == again.port)
        agent.close(AuthorizationFlow(request: AuthorizationRequest(configuration: configuration, redirectURI: again)))
    }

    @Test func aRedirectURIThatIsNotOnThisComputerIsRefusedBeforeListening() throws {
        let agent = BrowserUserAgent(parent: Window(title: "Listener test"))
        #expect(throws: OAuthError.self) { try agent.listen(for: URL(string: "https://app.example/callback")!) }
        #expect(agent.port == nil)
    }

    /// A connection to `port` is refused straight away (curl's 7): nothing listens there any more.
    private func expectRefused(port: Int) throws {
        let attempt = try whileLoopTurns { await outcome { try await HTTPClient(timeout: 5).get("http://127.0.0.1:\(port)/") } }
        switch attempt {
        case .failure(let failure as CurlFailure): #expect(failure.code == 7, "connection refused, not \(failure)")
        case .failure(let other): Issue.record("the port was not refused: \(other)")
        case .success(let reply): Issue.record("the port still answered after the sign-in ended: \(reply.status)")
        }
    }

    /// The port refuses connections once the last answer is written (the listener waits for it, 1 s at most).
    private func expectClosed(port: Int) throws {
        let refused = try whileLoopTurns { () -> Bool in
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                do {
                    _ = try await HTTPClient(timeout: 5).get("http://127.0.0.1:\(port)/")
                } catch let failure as CurlFailure where failure.code == 7 {
                    return true
                }
            }
            return false
        }
        #expect(refused, "port \(port) still answers")
    }
}

/// A value set by one task and read by another after a Flag said it is there.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ new: Value) { lock.withLock { value = new } }
    func get() -> Value { lock.withLock { value } }
}

func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
