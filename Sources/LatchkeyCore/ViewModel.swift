import OAuthCore

/// A provider as the list shows it.
public struct ProviderEntry: Equatable, Sendable {
    public var id: String
    public var displayName: String

    public init(id: String, displayName: String) {
        self.id = id
        self.displayName = displayName
    }
}

/// Everything the main window shows: what the state says (derived here, from the state alone), and
/// what the window's controller knows around it (the list, the provider's accounts, its pictures).
/// `MainWindow.render` is the window's one entry: nothing else changes what it shows.
public struct ViewModel: Equatable, Sendable {
    public var signInEnabled: Bool
    public var getProfileEnabled: Bool
    public var signOutVisible: Bool
    public var signOutEnabled: Bool
    /// Open profile is visible exactly when this is set; its label is the URL.
    public var openProfileURL: String?
    public var status: String
    /// Cancel is shown while a sign-in waits in the browser (the embedded window has its own close).
    public var cancelVisible: Bool
    /// Set up… (in place of Sign in) while the provider lacks what it needs.
    public var setUpVisible: Bool
    /// Whether the provider list, the account list and the user agent choice can be changed now.
    public var providerChoiceEnabled: Bool
    /// Add another account: while a provider is ready and nothing else is under way.
    public var addAccountEnabled: Bool
    public var busy: Bool
    public var isError: Bool
    public var profile: Profile?
    /// The large line at the top: the person's name once known.
    public var headline: String
    /// The line under it: their e-mail, or what to do next.
    public var subline: String
    /// What the sign-in allows (its scopes), while signed in, and where the key its tokens are bound to
    /// is kept (DPoP); nil otherwise, or when it allows nothing said.
    public var scopesLine: String?

    // What the window shows around the state: set by the window's controller from what it knows.

    /// The providers in the list, in order.
    public var providers: [ProviderEntry] = []
    /// The provider chosen in the list and named under the title.
    public var shownProvider: ProviderEntry?
    /// Where this provider's sign-in may happen (a choice when both; nothing while it cannot be used),
    /// and where the person chose.
    public var userAgents: [ProviderConfiguration.UserAgentKind] = []
    public var chosenUserAgent: ProviderConfiguration.UserAgentKind?
    /// Whether the provider offers sign-in on another device (it has a device authorization endpoint).
    public var offersDeviceSignIn = false
    /// The provider's accounts (listed once there are two), and the key of the one in use.
    public var accounts: [Account] = []
    public var accountInUse: String?
    /// Pictures fetched: the profile's (shown while a profile is), and each listed account's by key.
    public var picture: [UInt8]?
    public var accountPictures: [String: [UInt8]] = [:]

    /// The picture the avatar shows: the profile's while a profile is shown, else none (the generic one).
    public var avatar: [UInt8]? { profile == nil ? nil : picture }

    /// - Parameter account: the account in use, as the list knows it: named before its profile is fetched.
    public init(
        state: AppState, providerName: String, storeName: String,
        userAgent: ProviderConfiguration.UserAgentKind = .embedded, scopes: [String] = [], keyKept: String? = nil, future: String? = nil,
        account: Account? = nil
    ) {
        addAccountEnabled = state.allowsChoosingProvider && state.hasProvider
        let lines = [
            scopes.isEmpty ? nil : "Allows: " + scopes.joined(separator: ", "), keyKept.map { "Its tokens are bound to a key kept \($0)." },
            future,
        ].compactMap { $0 }
        scopesLine = state.isSignedIn && !lines.isEmpty ? lines.joined(separator: "\n") : nil
        signInEnabled = false
        cancelVisible = false
        setUpVisible = false
        providerChoiceEnabled = state.allowsChoosingProvider
        getProfileEnabled = state.isSignedIn && state != .fetchingProfile
        signOutVisible = state.isSignedIn || state == .signingOut
        signOutEnabled = state.isSignedIn && state != .fetchingProfile
        openProfileURL = nil
        isError = false
        profile = nil
        headline = state.isSignedIn ? "Signed in" : "Not signed in"
        subline = state.isSignedIn ? "Get your profile to see who you are." : "Sign in with \(providerName)."
        if state.isSignedIn, let account, account.name != nil || account.email != nil {
            headline = account.name ?? account.label
            subline = account.name == nil ? "" : account.email ?? ""
        }
        busy = Self.isBusy(state)
        status = Self.status(of: state, providerName: providerName, storeName: storeName, userAgent: userAgent)
        switch state {
        case .starting:
            // Not yet known: "Not signed in" here was read at every launch by people signed in.
            headline = "Checking your sign-in"
        case .signedOut:
            signInEnabled = true
        case .signingIn where userAgent == .browser:
            cancelVisible = true
        case .profileLoaded(let loaded, _):
            show(loaded, providerName: providerName)
        case .unavailable:
            headline = "\(providerName) is not ready"
            subline = "Choose Set up… to give it what it needs."
            setUpVisible = true
            isError = true
        case .failed(let message, let signedIn):
            signInEnabled = !signedIn
            isError = message != OAuthError.cancelled.description
        default:
            break
        }
    }

    private static func isBusy(_ state: AppState) -> Bool {
        switch state {
        case .starting, .signingIn, .signingInOnDevice, .exchanging, .saving, .fetchingProfile, .signingOut: true
        default: false
        }
    }

    /// The status line: what is happening, or what happened.
    private static func status(
        of state: AppState, providerName: String, storeName: String, userAgent: ProviderConfiguration.UserAgentKind
    ) -> String {
        switch state {
        case .starting: "Starting… (looking for your saved sign-in)"
        case .signedOut(let notice): notice ?? "Not signed in. Sign in with \(providerName) to begin."
        case .signingIn where userAgent == .browser:
            "Continue in your browser… Latchkey opened the \(providerName) sign-in page there. "
                + "If it shows an error instead of a sign-in, press Cancel and choose “In this window”."
        case .signingIn: "Sign in with \(providerName) in the window that opened."
        case .signingInOnDevice: "Waiting for you to sign in with \(providerName) on your other device…"
        case .exchanging: "Completing sign-in…"
        case .saving: "Saving your sign-in in \(storeName)… If your keyring asks for its password, answer it there."
        case .signedIn(let notice): notice ?? "Signed in with \(providerName). Your sign-in is kept in \(storeName)."
        case .fetchingProfile: "Fetching your profile…"
        case .profileLoaded(let loaded, let notice):
            notice ?? "Signed in with \(providerName) as \(loaded.name ?? loaded.email ?? "you")."
        case .signingOut: "Signing out…"
        case .unavailable(let reason): reason
        case .failed(let message, _): message
        }
    }

    /// The person's name, e-mail and profile link, once the profile is loaded.
    private mutating func show(_ loaded: Profile, providerName: String) {
        profile = loaded
        headline = loaded.name ?? loaded.email ?? "Signed in"
        let email = loaded.email.map { loaded.emailVerified == false ? "\($0) (not verified by \(providerName))" : $0 }
        subline =
            loaded.name == nil
            ? (loaded.emailVerified == false ? "E-mail not verified by \(providerName)" : "")
            : email ?? ""
        openProfileURL = loaded.profileURL?.absoluteString
    }
}
