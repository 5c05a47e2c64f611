import CSoup
import FoundationEssentials
import GtkKit
import Logging
import OAuthCore

/// The system browser as the user agent (RFC 8252): the authorization page opens
/// in the person's default browser, and the provider sends them back to a
/// listener on 127.0.0.1 at a port the kernel picks (§7.3, §8.3) — or, for a provider
/// whose server compares redirect URIs exactly, at the port registered with it
/// (`browser_redirect_uri`).
///
/// The listener is libsoup's server on GTK's main loop, loaded with dlopen only
/// when such a sign-in starts. It answers every request; only a GET to the
/// redirect path that carries this sign-in's state reaches the flow, once
/// (`AuthorizationFlow.resumeFromListener`) — anything else, from a page that
/// merely knows the port, gets a 404 and changes nothing. It closes after that
/// answer is written, when the sign-in is cancelled, and after `timeout`.
@MainActor
public final class BrowserUserAgent: ExternalUserAgent {
    /// The window to open the browser from and to raise when it comes back; nil for a command without one.
    private let parent: Window?
    private let timeout: Duration
    private let logger: Logger
    private var listener: OpaquePointer?
    private var redirectURI: URL?
    private var flow: (any SignInFlow)?

    /// - Parameter timeout: how long to wait for the browser to come back before the sign-in fails.
    public init(parent: Window?, timeout: Duration = defaultTimeout, logger: Logger = Logger(label: "Latchkey.BrowserUserAgent")) {
        self.parent = parent
        self.timeout = timeout
        self.logger = logger
    }

    /// How long a sign-in waits for the browser to come back, unless told otherwise.
    public nonisolated static let defaultTimeout = Duration.seconds(600)

    /// The port the listener is on while a sign-in waits; nil otherwise.
    public var port: Int? { listener == nil ? nil : redirectURI?.port }

    public nonisolated var listensOnLoopback: Bool { true }

    public nonisolated func redirectURI(for configuration: ProviderConfiguration) async throws -> URL {
        try await MainLoop.run { try self.listen(for: configuration.browserRedirectURI ?? configuration.redirectURI) }
    }

    public nonisolated func present(_ flow: any SignInFlow) async throws {
        try await MainLoop.run { try self.open(flow) }
    }

    public nonisolated func dismiss(_ flow: any SignInFlow) async {
        await MainLoop.run { self.close(flow) }
    }

    /// Opens the listener on the configured URI's port, or (none) on one the kernel picks;
    /// the configured loopback redirect URI with that port.
    func listen(for configured: URL) throws -> URL {
        guard listener == nil else { throw OAuthError.browser("a sign-in is already waiting for your browser.") }
        guard ProviderConfiguration.browserCanReturn(to: configured),
            var components = URLComponents(url: configured, resolvingAgainstBaseURL: false)
        else {
            throw OAuthError.browser(
                "its redirect URI must be http://127.0.0.1/… for the browser to come back to Latchkey, not \(configured.absoluteString).")
        }
        var port = UInt32(configured.port ?? 0)
        var taken: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard
            let opened = csoup_listen(
                { context, message, method, uri in
                    guard let context, let message else { return }
                    let agent = Unmanaged<BrowserUserAgent>.fromOpaque(context)
                    let (method, uri) = (method.map { String(cString: $0) } ?? "", uri.map { String(cString: $0) } ?? "")
                    MainActor.assumeIsolated { agent.takeUnretainedValue().answer(message, method: method, uri: uri) }
                }, context, &port, &taken, &message, message.count)
        else {
            if taken != 0 {
                throw OAuthError.browser(
                    "port \(port) on this computer, where the provider sends your browser back, is taken by another program. "
                        + "Close that program, or sign in in the window instead.")
            }
            throw OAuthError.browser(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        listener = opened
        components.port = Int(port)
        let uri = components.url!
        redirectURI = uri
        logger.debug("listening for the browser", metadata: ["port": "\(port)"])
        return uri
    }

    /// Opens the authorization page in the default browser.
    func open(_ flow: any SignInFlow) throws {
        try accept(flow)
        do {
            try Window.showURI(flow.authorizationURL.absoluteString, over: parent)
        } catch {
            throw OAuthError.browser("your web browser could not be opened (\(error)).")
        }
        logger.debug("authorization page opened in the browser")
    }

    /// From now on the listener hands the redirect to `flow`, until it ends or `timeout` passes.
    func accept(_ flow: any SignInFlow) throws {
        guard listener != nil, flow.redirectURI == redirectURI else {
            throw OAuthError.browser("the sign-in request does not name this listener's address.")
        }
        self.flow = flow
        let seconds = min(max(timeout.components.seconds, 1), 86_400)
        MainLoop.after(milliseconds: UInt32(seconds * 1000)) { [weak flow] in
            flow?.fail(.browser("no answer came back from your browser within \(Self.duration(seconds)). Try again."))
        }
    }

    /// Closes the listener, if it still serves `flow` (or no flow got that far).
    func close(_ flow: any SignInFlow) {
        guard self.flow == nil || self.flow === flow else { return }
        if let listener { csoup_close(listener) }
        listener = nil
        redirectURI = nil
        self.flow = nil
    }

    isolated deinit {
        if let listener { csoup_close(listener) }
    }

    private func answer(_ message: UnsafeMutableRawPointer, method: String, uri: String) {
        guard let flow, let url = URL(string: uri), flow.resumeFromListener(with: url, method: method) else {
            logger.debug("refused a request to the listener", metadata: ["method": "\(method.prefix(10))"])
            csoup_respond(message, 404, Self.page(title: "Not found", text: "There is nothing here."))
            return
        }
        // Said before the code exchange, which can still fail: the window says how it ends.
        let succeeded = flow.succeeded == true
        logger.debug("redirect received from the browser")
        csoup_respond(
            message, 200,
            succeeded
                ? Self.page(
                    title: "Answer received",
                    text: "Latchkey has the answer and finishes the sign-in in its window. You can close this tab.")
                : Self.page(
                    title: "Sign-in did not complete",
                    text: "The sign-in did not complete; Latchkey says why. You can close this tab."))
        parent?.present()
    }

    /// A page that holds nothing from the request, so nothing a request sends can appear in it.
    static func page(title: String, text: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(title) · Latchkey</title>
        <style>body{font:16px system-ui,sans-serif;max-width:32em;margin:15vh auto;padding:0 1em;color:#222}</style>
        </head><body><h1>\(title)</h1><p>\(text)</p></body></html>
        """
    }

    private nonisolated static func duration(_ seconds: Int64) -> String {
        let (count, unit) = seconds >= 60 && seconds % 60 == 0 ? (seconds / 60, "minute") : (seconds, "second")
        return "\(count) \(unit)\(count == 1 ? "" : "s")"
    }
}
