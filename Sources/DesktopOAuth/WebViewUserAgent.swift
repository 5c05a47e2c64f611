import CGtk
import CWebSignIn
import FoundationEssentials
import GtkKit
import Logging
import OAuthCore

/// The embedded user agent: the provider's page in a WebKitGTK window over the
/// app (libLatchkeyWebSignIn.so), joined to OAuthCore's flow.
///
/// WebKit is loaded with dlopen when first needed — by `prepare()`, which the
/// app calls once its window is up and it is signed out, or by the first
/// sign-in — so a launch, and any launch signed in, pays nothing for it and
/// starts no web process. Each sign-in gets a fresh ephemeral web context.
/// Every navigation is offered to the flow; the redirect URI is ignored — it
/// never loads, and the code never leaves this process.
@MainActor
public final class WebViewUserAgent: ExternalUserAgent {
    /// The window the sign-in window is modal over; nil for a command that shows no window of its own.
    private let parent: Window?
    private let providerName: String
    private let logger: Logger
    private var prepared: UnsafeMutableRawPointer?
    private var presented: UnsafeMutableRawPointer?
    private var isPreparing = false
    private var flow: (any SignInFlow)?

    public init(parent: Window?, providerName: String, logger: Logger = Logger(label: "Latchkey.WebViewUserAgent")) {
        self.parent = parent
        self.providerName = providerName
        self.logger = logger
    }

    /// Loads WebKit and starts a web process for the next sign-in, so its page
    /// appears sooner. The library loads off GTK's thread (linking WebKit takes
    /// tens of milliseconds); only the window is made on it.
    public func prepare() {
        guard prepared == nil, !isPreparing else { return }
        isPreparing = true
        Task.detached { [weak self] in
            let loaded = try? WebSignInLibrary.shared()
            MainLoop.perform {
                guard let self else { return }
                self.isPreparing = false
                // A sign-in that started meanwhile made its own window: no second web process now.
                guard let loaded, self.prepared == nil, self.presented == nil else { return }
                self.prepared = loaded.interface.prepare()
                self.logger.debug("sign-in window prepared")
            }
        }
    }

    // The protocol's entry points are nonisolated: OAuthCore calls them from
    // its own task, and they hop onto GTK's thread through its main loop (the
    // main actor's own executor never runs while GTK's loop does).

    public nonisolated func present(_ flow: any SignInFlow) async throws {
        try await MainLoop.run { try self.show(flow) }
    }

    public nonisolated func dismiss(_ flow: any SignInFlow) async {
        await MainLoop.run { self.close(flow) }
    }

    /// Shows the sign-in window for `flow` over the parent window.
    public func show(_ flow: any SignInFlow) throws {
        guard presented == nil else { throw OAuthError.userAgent("a sign-in window is already open.") }
        let library = try WebSignInLibrary.shared()
        let handle = prepared ?? library.interface.prepare()
        prepared = nil
        presented = handle
        self.flow = flow
        let context = Unmanaged.passUnretained(self).toOpaque()
        "Sign in to \(providerName)".withCString { title in
            flow.authorizationURL.absoluteString.withCString { url in
                library.interface.present(
                    handle, parent.map { UnsafeMutableRawPointer($0.window) }, title, url, context,
                    { context, uri, method in
                        guard let context, let uri else { return 0 }
                        let (address, method) = (String(cString: uri), method.map { String(cString: $0) } ?? "GET")
                        let agent = Unmanaged<WebViewUserAgent>.fromOpaque(context)
                        return MainActor.assumeIsolated {
                            agent.takeUnretainedValue().navigation(to: address, method: method)
                        } ? 1 : 0
                    },
                    { context, kind, message in
                        guard let context else { return }
                        let text = message.map { String(cString: $0) }
                        let agent = Unmanaged<WebViewUserAgent>.fromOpaque(context)
                        MainActor.assumeIsolated { agent.takeUnretainedValue().event(kind, text) }
                    })
            }
        }
        logger.debug("sign-in window shown")
    }

    /// Closes the window shown for `flow`, if it is still the one shown.
    public func close(_ flow: any SignInFlow) {
        guard self.flow === flow else { return }
        if let presented { try? WebSignInLibrary.shared().interface.close(presented) }
        presented = nil
        self.flow = nil
    }

    isolated deinit {
        if let prepared { try? WebSignInLibrary.shared().interface.close(prepared) }
        if let presented { try? WebSignInLibrary.shared().interface.close(presented) }
    }

    private func navigation(to uri: String, method: String) -> Bool {
        guard let flow, let url = URL(string: uri) else { return false }
        // Where, but never the query or fragment: they carry the code and the state.
        logger.debug("navigation", metadata: ["to": "\(url.scheme ?? "?"):\(url.host.map { "//\($0)" } ?? "")\(url.path)"])
        guard flow.resume(with: url, method: method) else { return false }
        logger.debug("redirect intercepted")
        return true
    }

    private func event(_ kind: LatchkeySignInEvent, _ message: String?) {
        switch kind {
        case LatchkeySignInEventCancelled: flow?.cancel()
        case LatchkeySignInEventFailed: flow?.fail(.userAgent(message ?? "it stopped."))
        case LatchkeySignInEventPageLoaded: logger.debug("sign-in page loaded")
        default: logger.debug("unknown sign-in window event \(kind.rawValue)")
        }
    }
}
