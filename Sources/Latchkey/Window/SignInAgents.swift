import DesktopOAuth
import GtkKit
import Logging
import OAuthCore

/// Where the shown provider's sign-in happens, and the agents that do it: the
/// embedded view's (made when first needed, its title naming the provider, one
/// per provider shown) and the default browser's.
@MainActor
final class SignInAgents {
    private let parent: Window
    private let logger: Logger
    private lazy var browser = BrowserUserAgent(parent: parent)
    private var web: WebViewUserAgent?
    private var providerName = ""
    /// This window or the browser, as the provider or the person chose.
    var chosen = ProviderConfiguration.UserAgentKind.embedded

    init(parent: Window, logger: Logger) {
        self.parent = parent
        self.logger = logger
    }

    /// A provider is shown (`name`): its own embedded view, made when one is needed.
    func reset(for name: String, chosen: ProviderConfiguration.UserAgentKind = .embedded) {
        web = nil
        providerName = name
        self.chosen = chosen
    }

    /// The agent the next sign-in uses.
    var agent: any ExternalUserAgent { chosen == .browser ? browser : webAgent() }

    /// A sign-in is the likely next step: for the embedded view, WebKit and its web process
    /// start now, so the page appears sooner; and libcurl opens, so the code exchange after
    /// the redirect need not wait for it.
    func prepare() {
        if chosen == .embedded { webAgent().prepare() }
        let logger = self.logger
        MainLoop.work {
            do { try CurlTransport.load() } catch { logger.warning("\(error)") }
        }
    }

    private func webAgent() -> WebViewUserAgent {
        if let web { return web }
        let web = WebViewUserAgent(parent: parent, providerName: providerName)
        self.web = web
        return web
    }
}
