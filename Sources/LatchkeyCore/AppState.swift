import OAuthCore

/// What the app is doing. The widgets only render this; every change is a
/// transition `AppState.next(state, event)`, a pure function the tests call.
public enum AppState: Equatable, Sendable {
    /// Reading the stored sign-in (the keyring may take a moment).
    case starting
    case signedOut(notice: String?)
    /// The sign-in window is open.
    case signingIn
    /// The provider sent us back; the code is being exchanged.
    case exchanging
    /// Tokens received; they are being saved (a locked keyring may be asking for its password).
    case saving
    case signedIn(notice: String?)
    case fetchingProfile
    case profileLoaded(Profile, notice: String?)
    case signingOut
    /// Something went wrong; `signedIn` says whether a usable sign-in remains.
    case failed(message: String, signedIn: Bool)

    public var isSignedIn: Bool {
        switch self {
        case .signedIn, .fetchingProfile, .profileLoaded: true
        case .failed(_, let signedIn): signedIn
        case .starting, .signedOut, .signingIn, .exchanging, .saving, .signingOut: false
        }
    }

    /// Whether `event` would change anything now: a click the state does not
    /// accept (a second Sign in while signing in) is ignored.
    public func accepts(_ event: AppEvent) -> Bool {
        AppState.next(self, event) != self
    }

    public static func next(_ state: AppState, _ event: AppEvent) -> AppState {
        switch (state, event) {
        case (_, .launched(let signedIn, let notice)):
            return signedIn ? .signedIn(notice: notice) : .signedOut(notice: notice)
        case (_, .sessionEnded(let reason)):
            return state == .signingIn || state == .exchanging || state == .saving ? state : .signedOut(notice: reason)

        case (.signedOut, .signInRequested), (.failed(_, false), .signInRequested):
            return .signingIn
        case (.signingIn, .redirectReceived):
            return .exchanging
        case (.exchanging, .tokensReceived):
            return .saving
        case (.signingIn, .signInSucceeded(let notice)), (.exchanging, .signInSucceeded(let notice)),
            (.saving, .signInSucceeded(let notice)):
            return .signedIn(notice: notice)
        case (.signingIn, .signInFailed(let error)), (.exchanging, .signInFailed(let error)),
            (.saving, .signInFailed(let error)):
            return .failed(message: error.description, signedIn: false)

        case (.signedIn, .profileRequested), (.profileLoaded, .profileRequested), (.failed(_, true), .profileRequested):
            return .fetchingProfile
        case (.fetchingProfile, .profileLoaded(let profile)):
            return .profileLoaded(profile, notice: nil)
        case (.fetchingProfile, .profileFailed(let error)):
            if case .signedOut(let reason) = error { return .signedOut(notice: reason) }
            return .failed(message: error.description, signedIn: true)

        case (.profileLoaded(let profile, _), .profileOpened):
            return .profileLoaded(profile, notice: "Opened your profile in your web browser.")
        case (.profileLoaded(let profile, _), .profileOpenFailed(let message)):
            return .profileLoaded(profile, notice: message)

        case (let current, .signOutRequested) where current.isSignedIn:
            return .signingOut
        case (.signingOut, .signedOut(let notice)):
            return .signedOut(notice: notice)

        default:
            // An event that does not fit the state (a double click, a late
            // answer) changes nothing.
            return state
        }
    }
}

public enum AppEvent: Equatable, Sendable {
    case launched(signedIn: Bool, notice: String?)
    case signInRequested
    case redirectReceived
    /// The code was exchanged; the tokens are being saved.
    case tokensReceived
    /// Signed in; the notice says where the tokens went when not where they usually go.
    case signInSucceeded(notice: String?)
    case signInFailed(OAuthError)
    case profileRequested
    case profileLoaded(Profile)
    case profileFailed(OAuthError)
    case profileOpened
    case profileOpenFailed(String)
    case signOutRequested
    case signedOut(notice: String?)
    /// The stored sign-in can no longer be used (a refresh was refused).
    case sessionEnded(String)
}

/// Everything the main window shows, derived from the state alone.
public struct ViewModel: Equatable, Sendable {
    public var signInEnabled: Bool
    public var getProfileEnabled: Bool
    public var signOutVisible: Bool
    public var signOutEnabled: Bool
    /// Open profile is visible exactly when this is set; its label is the URL.
    public var openProfileURL: String?
    public var status: String
    public var busy: Bool
    public var isError: Bool
    public var profile: Profile?
    /// The large line at the top: the person's name once known.
    public var headline: String
    /// The line under it: their e-mail, or what to do next.
    public var subline: String

    public init(state: AppState, providerName: String, storeName: String) {
        signInEnabled = false
        getProfileEnabled = state.isSignedIn && state != .fetchingProfile
        signOutVisible = state.isSignedIn || state == .signingOut
        signOutEnabled = state.isSignedIn && state != .fetchingProfile
        openProfileURL = nil
        busy = false
        isError = false
        profile = nil
        headline = state.isSignedIn ? "Signed in" : "Not signed in"
        subline = state.isSignedIn ? "Get your profile to see who you are." : "Sign in with \(providerName)."
        switch state {
        case .starting:
            status = "Starting… (looking for your saved sign-in)"
            busy = true
        case .signedOut(let notice):
            signInEnabled = true
            status = notice ?? "Not signed in. Sign in with \(providerName) to begin."
        case .signingIn:
            status = "Sign in with \(providerName) in the window that opened."
            busy = true
        case .exchanging:
            status = "Completing sign-in…"
            busy = true
        case .saving:
            status = "Saving your sign-in in \(storeName)… If your keyring asks for its password, answer it there."
            busy = true
        case .signedIn(let notice):
            status = notice ?? "Signed in with \(providerName). Your sign-in is kept in \(storeName)."
        case .fetchingProfile:
            status = "Fetching your profile…"
            busy = true
        case .profileLoaded(let loaded, let notice):
            profile = loaded
            headline = loaded.name ?? loaded.email ?? "Signed in"
            let email = loaded.email.map { loaded.emailVerified == false ? "\($0) (not verified by \(providerName))" : $0 }
            subline = loaded.name == nil ? (loaded.emailVerified == false ? "E-mail not verified by \(providerName)" : "")
                : email ?? ""
            openProfileURL = loaded.profileURL?.absoluteString
            status = notice ?? "Signed in with \(providerName) as \(loaded.name ?? loaded.email ?? "you")."
        case .signingOut:
            status = "Signing out…"
            busy = true
        case .failed(let message, let signedIn):
            signInEnabled = !signedIn
            status = message
            isError = message != OAuthError.cancelled.description
        }
    }
}
