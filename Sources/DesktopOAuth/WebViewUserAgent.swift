import CGtk
import Foundation
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
public final class WebViewUserAgent: ExternalUserAgent {
    private let parent: Window
    private let providerName: String
    private let logger: Logger
    private var prepared: UnsafeMutableRawPointer?
    private var presented: UnsafeMutableRawPointer?
    private var isPreparing = false
    private var flow: AuthorizationFlow?

    public init(parent: Window, providerName: String, logger: Logger = Logger(label: "Latchkey.WebViewUserAgent")) {
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
                self.prepared = loaded.prepare()
                self.logger.debug("sign-in window prepared")
            }
        }
    }

    public func present(_ flow: AuthorizationFlow) throws {
        guard presented == nil else { throw OAuthError.userAgent("a sign-in window is already open.") }
        let library = try WebSignInLibrary.shared()
        let handle = prepared ?? library.prepare()
        prepared = nil
        presented = handle
        self.flow = flow
        let context = Unmanaged.passUnretained(self).toOpaque()
        library.present(
            handle, UnsafeMutableRawPointer(parent.window), "Sign in to \(providerName)", flow.authorizationURL.absoluteString,
            context,
            { context, uri, method in
                guard let context, let uri else { return 0 }
                let agent = Unmanaged<WebViewUserAgent>.fromOpaque(context).takeUnretainedValue()
                return agent.navigation(to: String(cString: uri), method: method.map { String(cString: $0) } ?? "GET") ? 1 : 0
            },
            { context, kind, message in
                guard let context else { return }
                let agent = Unmanaged<WebViewUserAgent>.fromOpaque(context).takeUnretainedValue()
                agent.event(kind, message.map { String(cString: $0) })
            })
        logger.debug("sign-in window shown")
    }

    public func dismiss() {
        if let presented { try? WebSignInLibrary.shared().close(presented) }
        presented = nil
        flow = nil
    }

    deinit {
        if let prepared { try? WebSignInLibrary.shared().close(prepared) }
        if let presented { try? WebSignInLibrary.shared().close(presented) }
    }

    private func navigation(to uri: String, method: String) -> Bool {
        guard let flow, let url = URL(string: uri) else { return false }
        // Where, but never the query or fragment: they carry the code and the state.
        logger.debug("navigation", metadata: ["to": "\(url.scheme ?? "?"):\(url.host.map { "//\($0)" } ?? "")\(url.path)"])
        guard flow.resume(with: url, method: method) else { return false }
        logger.debug("redirect intercepted")
        return true
    }

    private func event(_ kind: Int32, _ message: String?) {
        switch kind {
        case 0: flow?.cancel()
        case 1: flow?.fail(.userAgent(message ?? "it stopped."))
        default: logger.debug("sign-in page loaded")
        }
    }
}

/// libLatchkeyWebSignIn.so, opened once.
final class WebSignInLibrary: @unchecked Sendable {
    typealias Prepare = @convention(c) () -> UnsafeMutableRawPointer
    typealias Present = @convention(c) (
        UnsafeMutableRawPointer, UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?,
        @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32,
        @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void
    ) -> Void
    typealias Close = @convention(c) (UnsafeMutableRawPointer) -> Void

    static let fileName = "libLatchkeyWebSignIn.so"
    private static let lock = NSLock()
    nonisolated(unsafe) private static var loaded: Result<WebSignInLibrary, OAuthError>?

    let prepare: Prepare
    let presentFunction: Present
    let close: Close

    private init(handle: UnsafeMutableRawPointer) throws {
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            guard let address = dlsym(handle, name) else {
                throw OAuthError.userAgent("the sign-in component lacks \(name).")
            }
            return unsafeBitCast(address, to: type)
        }
        prepare = try symbol("latchkey_web_sign_in_prepare", as: Prepare.self)
        presentFunction = try symbol("latchkey_web_sign_in_present", as: Present.self)
        close = try symbol("latchkey_web_sign_in_close", as: Close.self)
    }

    func present(
        _ handle: UnsafeMutableRawPointer, _ parent: UnsafeMutableRawPointer?, _ title: String, _ url: String,
        _ context: UnsafeMutableRawPointer?, _ navigation: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32,
        _ event: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void
    ) {
        title.withCString { title in url.withCString { url in presentFunction(handle, parent, title, url, context, navigation, event) } }
    }

    /// Opens the library beside the executable (or under ../lib/latchkey when installed).
    static func shared() throws -> WebSignInLibrary {
        try lock.withLock {
            if let loaded { return try loaded.get() }
            let result = Result { try open() }.mapError { $0 as? OAuthError ?? .userAgent("\($0)") }
            loaded = result
            return try result.get()
        }
    }

    private static func open() throws -> WebSignInLibrary {
        let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            directory.appendingPathComponent(fileName),
            directory.deletingLastPathComponent().appendingPathComponent("lib/latchkey/\(fileName)"),
        ]
        var reasons: [String] = []
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.path) {
            if let handle = dlopen(candidate.path, RTLD_NOW | RTLD_LOCAL) {
                return try WebSignInLibrary(handle: handle)
            }
            reasons.append(dlerror().map { String(cString: $0) } ?? candidate.path)
        }
        throw OAuthError.userAgent(
            "its web view could not be loaded (\(reasons.first ?? "\(fileName) is not next to latchkey")). Reinstall Latchkey.")
    }
}
