import Foundation
import OAuthCore

/// A user agent that drives the sandbox's sign-in page over HTTP, as a
/// browser would: open the page, fill in the form, press Allow or Deny, and
/// report the navigation to the redirect URI.
public final class FormPostingUserAgent: ExternalUserAgent, @unchecked Sendable {
    public let action: String
    public let username: String
    public let password: String
    private let lock = NSLock()
    private var _redirect: URL?
    private var _presented: URL?
    private var _dismissed = false

    public init(action: String = "allow", username: String = "ada", password: String = "engine") {
        self.action = action
        self.username = username
        self.password = password
    }

    public var redirect: URL? { lock.withLock { _redirect } }
    /// The address the last flow presented opened.
    public var presented: URL? { lock.withLock { _presented } }
    public var dismissed: Bool { lock.withLock { _dismissed } }

    public func present(_ flow: any SignInFlow) async throws {
        let url = flow.authorizationURL.absoluteString
        lock.withLock { _presented = flow.authorizationURL }
        Task.detached { [self] in
            do {
                let reply = try await SandboxPages.answer(url, action: action, username: username, password: password)
                guard let location = reply.header("location"), let redirect = URL(string: location) else {
                    flow.fail(.userAgent("the sign-in page answered HTTP \(reply.status)"))
                    return
                }
                lock.withLock { _redirect = redirect }
                if !flow.resume(with: redirect) { flow.fail(.userAgent("the page went elsewhere")) }
            } catch {
                flow.fail(.userAgent("\(error)"))
            }
        }
    }

    public func dismiss(_ flow: any SignInFlow) async { lock.withLock { _dismissed = true } }
}
