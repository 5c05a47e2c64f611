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
    /// The chosen provider cannot be used as it is; the sentence says why and what to do.
    case unavailable(String)
    /// Something went wrong; `signedIn` says whether a usable sign-in remains.
    case failed(message: String, signedIn: Bool)

    /// Whether another provider may be chosen now: not while a sign-in, a
    /// sign-out or a profile request of this one is under way.
    public var allowsChoosingProvider: Bool {
        switch self {
        case .signingIn, .exchanging, .saving, .signingOut, .fetchingProfile: false
        default: true
        }
    }

    public var isSignedIn: Bool {
        switch self {
        case .signedIn, .fetchingProfile, .profileLoaded: true
        case .failed(_, let signedIn): signedIn
        case .starting, .signedOut, .signingIn, .exchanging, .saving, .signingOut, .unavailable: false
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
        case (let current, .providerChosen) where current.allowsChoosingProvider:
            return .starting
        case (let current, .providerUnavailable(let reason)) where current.allowsChoosingProvider:
            return .unavailable(reason)
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
            return .profileLoaded(profile, notice: profile.accountChange?.description)
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
