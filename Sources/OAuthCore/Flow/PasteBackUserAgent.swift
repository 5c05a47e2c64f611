import FoundationEssentials

/// A sign-in in a browser that cannot reach this program (another machine, a container's host):
/// the authorization page's address is shown for the person to open anywhere, and the address
/// the provider then sent their browser to — the redirect URI with the code, which that browser
/// could not load — is pasted back. It is taken as any redirect is: only the redirect URI
/// itself, with this attempt's `state` (and `iss`), and PKCE binds the code to this program.
///
/// `show` says where to go; `read` returns the next line the person typed (nil at the end of the
/// input, which cancels the sign-in). `read` runs on a thread of its own: it may block.
public final class PasteBackUserAgent: ExternalUserAgent, Sendable {
    private let show: @Sendable (_ page: URL, _ redirectURI: URL) -> Void
    private let read: @Sendable () -> String?
    /// Said when a pasted line is not the redirect: what was wrong, and that another may be pasted.
    private let retry: @Sendable (String) -> Void

    public init(
        show: @escaping @Sendable (_ page: URL, _ redirectURI: URL) -> Void, read: @escaping @Sendable () -> String?,
        retry: @escaping @Sendable (String) -> Void
    ) {
        self.show = show
        self.read = read
        self.retry = retry
    }

    /// The browser's redirect URI where there is one (a loopback address the far browser cannot
    /// reach, and so shows in its address bar), else the configured one.
    public func redirectURI(for configuration: ProviderConfiguration) async throws -> URL {
        configuration.browserRedirectURI ?? configuration.redirectURI
    }

    public func present(_ flow: any SignInFlow) async throws {
        show(flow.authorizationURL, flow.redirectURI)
        let (read, retry) = (self.read, self.retry)
        let started = BlockingWork.startThread {
            while !flow.isFinished {
                guard let line = read() else {
                    flow.cancel()
                    return
                }
                let text = line.trimmed()
                if text.isEmpty { continue }
                guard let url = URL(string: text), url.scheme != nil else {
                    retry("That is not a web address. Paste the whole address from the browser's address bar.")
                    continue
                }
                // Taken or refused by the flow itself: the redirect URI, this attempt's state, the issuer.
                if flow.resume(with: url) { return }
                retry(
                    "That address is not where \(flow.redirectURI.host ?? "the provider") sends you back to "
                        + "(it starts with \(flow.redirectURI.absoluteString)). Paste the address the browser ended on.")
            }
        }
        guard started else { throw OAuthError.userAgent("no thread could be started to read what you paste.") }
    }

    public func dismiss(_ flow: any SignInFlow) async {}
}
