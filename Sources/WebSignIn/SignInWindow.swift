import CGtk
import CWebKit
import Foundation
import GtkKit
import Loopback

/// The sign-in window: the provider's page in a WebKitGTK view, above it the
/// page's host and whether the connection is secure, a progress bar, Cancel.
///
/// It knows nothing of OAuth: every navigation is offered to `navigation`
/// (address and method), which answers whether it was the redirect (then it is
/// ignored and never loads); the window reports cancel, failure and "page
/// loaded" through `event`. One window, one ephemeral web context, one sign-in.
///
/// What the window itself refuses, whatever the page does: plain http off this
/// computer, downloads, second windows (a popup loads here instead), and any
/// navigation at all once it is closing.
@MainActor
final class SignInWindow {
    enum Event {
        case cancelled
        case failed(String)
        case pageLoaded
    }

    private let window: Window
    private let header: HeaderBar
    private let cancel = Button(label: "Cancel")
    private let securityIcon = Image(iconName: "content-loading-symbolic")
    private let hostLabel = Label("Connecting…")
    private let progressBar = ProgressBar()
    private let webView = WebView()
    private var navigation: ((_ uri: String, _ method: String) -> Bool)?
    private var event: ((Event) -> Void)?
    private var presented = false
    private var closed = false

    /// Builds the window and starts a web process on a blank page, so that a
    /// later `present` only has to load the provider's page.
    /// Layout: the header bar, the progress bar and the view.
    init() {
        window = Window(title: "Sign in")
        window.setDefaultSize(width: 560, height: 720)
        header = HeaderBar(title: "Sign in", closeButton: true)
        header.packStart(cancel)
        window.setTitlebar(header)
        cancel.setAccessible(name: "Cancel")

        hostLabel.setAccessible(name: "Connecting…", description: "The address of the sign-in page")
        let location = Box(vertical: false, spacing: 6)
        location.setMargins(6)
        location.append(securityIcon)
        location.append(hostLabel, expand: true)
        progressBar.addStyleClass("osd")
        progressBar.setAccessible(name: "Loading")
        webView.setExpand(horizontal: true, vertical: true)
        webView.setAccessible(name: "Sign-in page")
        let content = Box(vertical: true, spacing: 0)
        content.append(location)
        content.append(progressBar)
        content.append(webView, expand: true)
        window.setChild(content)

        cancel.onClicked { [weak self] in self?.event?(.cancelled) }
        window.onCloseRequest { [weak self] in
            // Closing the window is Cancel; the owner then closes it for good.
            self?.event?(.cancelled)
            return true
        }
        webView.onNavigation { [weak self] navigation in
            guard let self, !self.closed else { return true }
            // Before the sign-in, only the blank page that starts the web process.
            guard self.presented, let owner = self.navigation else { return navigation.uri != "about:blank" }
            if owner(navigation.uri, navigation.method) { return true }
            if let url = URL(string: navigation.uri), url.scheme?.lowercased() == "http",
                !Loopback.isLoopback(host: url.host ?? "")
            {
                self.event?(
                    .failed(
                        "the sign-in page tried to continue to \(url.host ?? "another site") without encryption (plain http), "
                            + "so it was stopped before anything was sent."))
                return true
            }
            return false
        }
        webView.openNewWindowsHere()
        webView.onDownloadRefused { [weak self] mainFrame in
            guard let self, self.presented, mainFrame else { return }
            self.event?(.failed("the sign-in page tried to download a file, which this window never does. Nothing was saved."))
        }
        webView.onLoadChanged { [weak self] event in self?.loadChanged(event) }
        webView.onNotify("estimated-load-progress") { [weak self] in
            guard let self else { return }
            self.progressBar.fraction = self.webView.progress
        }
        webView.onLoadFailed { [weak self] failure in self?.loadFailed(failure) ?? true }
        webView.onTLSError { [weak self] uri, flags in
            let host = URL(string: uri)?.host ?? "the provider"
            self?.event?(
                .failed("the connection to \(host) is not secure: its certificate \(WebView.describe(flags)). The page was not shown."))
        }
        webView.onWebProcessTerminated { [weak self] reason in
            guard let self, self.presented else { return }
            let why = reason == WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT ? "ran out of memory" : "stopped unexpectedly"
            self.event?(.failed("the sign-in page \(why). Try again."))
        }
        webView.loadBlank()
    }

    func present(
        over parent: UnsafeMutablePointer<GtkWindow>?, title: String, url: URL,
        navigation: @escaping (_ uri: String, _ method: String) -> Bool,
        event: @escaping (Event) -> Void
    ) {
        self.navigation = navigation
        self.event = event
        presented = true
        window.title = title
        header.title = title
        if let parent { window.makeModal(over: parent) } else { window.center() }
        window.showAll()
        webView.load(url)
    }

    /// Hides the window at once and destroys it (with its web view and
    /// context) a little later: tearing WebKit down takes the GTK thread about
    /// 10 ms, which would otherwise delay the app's "signed in". Meanwhile the
    /// page may still run, so from here on every navigation is refused.
    func close() {
        presented = false
        closed = true
        navigation = nil
        event = nil
        webView.disconnectAll()
        webView.refuseEverything()
        webView.stop()
        cancel.disconnectAll()
        window.disconnectAll()
        window.hide()
        MainLoop.after(milliseconds: 500) { [self] in window.destroy() }
    }

    private func loadChanged(_ loadEvent: WebKitLoadEvent) {
        guard presented else { return }
        switch loadEvent {
        case WEBKIT_LOAD_STARTED:
            progressBar.show()
        case WEBKIT_LOAD_COMMITTED:
            showLocation()
        case WEBKIT_LOAD_FINISHED:
            progressBar.hide()
            event?(.pageLoaded)
        default:
            break
        }
    }

    /// The host the person is typing into, and whether the connection is secure.
    private func showLocation() {
        guard let url = webView.uri.flatMap(URL.init(string:)) else { return }
        guard let host = url.host, !host.isEmpty else {
            // about:blank, data:… — no site to name; never leave the last one shown.
            let place = url.scheme?.lowercased() == "about" ? url.absoluteString : "\(url.scheme ?? "unknown"): page"
            let security = "Not a web address"
            securityIcon.setIcon("channel-insecure-symbolic")
            securityIcon.setAccessible(name: security)
            securityIcon.setTooltip(security)
            hostLabel.setMarkup("<b>\(Label.escape(place))</b> — \(security)")
            hostLabel.setAccessible(name: "\(place) — \(security)", description: "The address of the sign-in page")
            return
        }
        let icon: String
        let security: String
        if url.scheme == "https" && webView.hasValidTLS {
            (icon, security) = ("channel-secure-symbolic", "Secure connection")
        } else if Loopback.isLoopback(host: host) {
            (icon, security) = ("computer-symbolic", "On this computer")
        } else {
            (icon, security) = ("channel-insecure-symbolic", "Not secure")
        }
        let port = url.port.map { ":\($0)" } ?? ""
        securityIcon.setIcon(icon)
        securityIcon.setAccessible(name: security)
        securityIcon.setTooltip(security)
        hostLabel.setMarkup("<b>\(Label.escape(host + port))</b> — \(Label.escape(security))")
        hostLabel.setAccessible(name: "\(host)\(port) — \(security)", description: "The address of the sign-in page")
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
        guard presented else { return true }
        let host = URL(string: failure.uri)?.host ?? "the provider"
        event?(.failed("the sign-in page at \(host) could not be loaded (\(failure.message))."))
        return true
    }
}
