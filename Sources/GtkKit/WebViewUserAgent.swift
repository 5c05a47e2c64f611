import CGtk
import CWebKit
import Foundation
import Logging
import OAuthCore

/// The embedded user agent: the provider's page in a WebKitGTK view, in a
/// modal window over the app, with the page's host, whether the connection is
/// secure, a progress bar and Cancel above it.
///
/// Nothing WebKit is made until a sign-in starts: an app launched signed in
/// runs no web process. Each sign-in gets a fresh ephemeral context.
/// `decide-policy` offers every navigation to the flow; the redirect URI is
/// ignored — it never loads, and the code never leaves this process.
public final class WebViewUserAgent: ExternalUserAgent {
    private weak var parent: Window?
    private let providerName: String
    private let logger: Logger

    private var window: Window?
    /// Kept while the window lives: a wrapper's deinit disconnects its handlers.
    private var cancelButton: Button?
    private var webView: WebView?
    private var hostLabel: Label?
    private var securityIcon: Image?
    private var progressBar: ProgressBar?
    private var flow: AuthorizationFlow?

    public init(parent: Window, providerName: String, logger: Logger = Logger(label: "Latchkey.WebViewUserAgent")) {
        self.parent = parent
        self.providerName = providerName
        self.logger = logger
    }

    public var isPresenting: Bool { window != nil }

    public func present(_ flow: AuthorizationFlow) throws {
        guard window == nil else { throw OAuthError.userAgent("a sign-in window is already open.") }
        self.flow = flow

        let window = Window(title: "Sign in to \(providerName)")
        window.setDefaultSize(width: 560, height: 720)
        if let parent { window.makeModal(over: parent) }
        let cancel = Button(label: "Cancel")
        cancel.setAccessible(name: "Cancel")
        let header = HeaderBar(title: "Sign in to \(providerName)", closeButton: true)
        header.packStart(cancel)
        window.setTitlebar(header)

        let securityIcon = Image(iconName: "content-loading-symbolic")
        let hostLabel = Label("Connecting…")
        hostLabel.setAccessible(name: "Connecting…", description: "The address of the sign-in page")
        let location = Box(vertical: false, spacing: 6)
        location.setMargins(6)
        location.append(securityIcon)
        location.append(hostLabel, expand: true)

        let progressBar = ProgressBar()
        progressBar.addStyleClass("osd")
        progressBar.setAccessible(name: "Loading")

        let webView = WebView()
        webView.setExpand(horizontal: true, vertical: true)
        webView.setAccessible(name: "Sign-in page")

        let content = Box(vertical: true, spacing: 0)
        content.append(location)
        content.append(progressBar)
        content.append(webView, expand: true)
        window.setChild(content)

        cancel.onClicked { [weak self] in self?.flow?.cancel() }
        window.onCloseRequest { [weak self] in
            // Closing the window is Cancel; the flow's end tears the window down.
            self?.flow?.cancel()
            return true
        }
        webView.onNavigation { [weak self] uri in self?.navigation(to: uri) ?? false }
        webView.onLoadChanged { [weak self] event in self?.loadChanged(event) }
        webView.onNotify("estimated-load-progress") { [weak self, weak webView] in
            self?.progressBar?.fraction = webView?.progress ?? 0
        }
        webView.onLoadFailed { [weak self] failure in self?.loadFailed(failure) ?? false }
        webView.onTLSError { [weak self] uri, flags in
            let host = URL(string: uri)?.host ?? "the provider"
            self?.flow?.fail(
                .userAgent("the connection to \(host) is not secure: its certificate \(WebView.describe(flags)). The page was not shown."))
        }
        webView.onWebProcessTerminated { [weak self] reason in
            let why = reason == WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT ? "ran out of memory" : "stopped unexpectedly"
            self?.flow?.fail(.userAgent("the sign-in page \(why). Try again."))
        }

        self.window = window
        self.cancelButton = cancel
        self.webView = webView
        self.hostLabel = hostLabel
        self.securityIcon = securityIcon
        self.progressBar = progressBar
        window.showAll()
        logger.debug("sign-in window shown")
        webView.load(flow.authorizationURL)
    }

    public func dismiss() {
        webView?.disconnectAll()
        webView?.stop()
        cancelButton?.disconnectAll()
        window?.disconnectAll()
        window?.destroy()
        window = nil
        cancelButton = nil
        webView = nil
        hostLabel = nil
        securityIcon = nil
        progressBar = nil
        flow = nil
    }

    private func navigation(to uri: String) -> Bool {
        guard let flow, let url = URL(string: uri) else { return false }
        // Where, but never the query or fragment: they carry the code and the state.
        logger.debug("navigation", metadata: ["to": "\(url.scheme ?? "?"):\(url.host.map { "//\($0)" } ?? "")\(url.path)"])
        if flow.resume(with: url) {
            logger.debug("redirect intercepted")
            return true
        }
        return false
    }

    private func loadChanged(_ event: WebKitLoadEvent) {
        switch event {
        case WEBKIT_LOAD_STARTED:
            progressBar?.show()
        case WEBKIT_LOAD_COMMITTED:
            showLocation()
        case WEBKIT_LOAD_FINISHED:
            progressBar?.hide()
            logger.debug("sign-in page loaded")
        default:
            break
        }
    }

    /// The host the person is typing into, and whether the connection is secure.
    private func showLocation() {
        guard let webView, let url = webView.uri.flatMap(URL.init(string:)), let host = url.host else { return }
        let icon: String
        let security: String
        if url.scheme == "https" && webView.hasValidTLS {
            (icon, security) = ("channel-secure-symbolic", "Secure connection")
        } else if ["127.0.0.1", "::1", "localhost"].contains(host) {
            (icon, security) = ("computer-symbolic", "On this computer")
        } else {
            (icon, security) = ("channel-insecure-symbolic", "Not secure")
        }
        let port = url.port.map { ":\($0)" } ?? ""
        securityIcon?.setIcon(icon)
        securityIcon?.setAccessible(name: security)
        securityIcon?.setTooltip(security)
        hostLabel?.setMarkup("<b>\(Label.escape(host + port))</b> — \(Label.escape(security))")
        hostLabel?.setAccessible(name: "\(host)\(port) — \(security)", description: "The address of the sign-in page")
    }

    private func loadFailed(_ failure: WebView.LoadFailure) -> Bool {
        // Ignoring the redirect interrupts that load (policy error 102), and a
        // new navigation cancels the previous one: both are expected.
        if failure.domain == webkit_policy_error_quark(),
            failure.code == Int32(WEBKIT_POLICY_ERROR_FRAME_LOAD_INTERRUPTED_BY_POLICY_CHANGE.rawValue)
        {
            return true
        }
        if failure.domain == webkit_network_error_quark(), failure.code == Int32(WEBKIT_NETWORK_ERROR_CANCELLED.rawValue) {
            return true
        }
        logger.debug("load failed", metadata: ["domain": "\(failure.domain)", "code": "\(failure.code)"])
        guard let flow, !flow.isFinished else { return true }
        let host = URL(string: failure.uri)?.host ?? "the provider"
        flow.fail(.userAgent("the sign-in page at \(host) could not be loaded (\(failure.message))."))
        return true
    }
}
