import OAuthCore

/// What the app is doing. The widgets only render this; every change is a
/// transition `AppState.next(state, event)`, a pure function the tests call,
/// which also names what the app must do next (`AppEffect`).
public enum AppState: Equatable, Sendable {
    /// Reading the stored sign-in (the keyring may take a moment). `signOutOnceRead`: another process
    /// asked to sign out of this provider meanwhile (`latchkey --sign-out`); that is done once the read
    /// answers, through the path its answer calls for, never beside the read (which could find the
    /// sign-in first and show it signed in while it was being deleted).
    case starting(signOutOnceRead: Bool = false)
    case signedOut(notice: String?)
    /// The sign-in window is open.
    case signingIn
    /// Waiting for the person to sign in on another device (RFC 8628), with the code shown.
    case signingInOnDevice
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
        case .signingIn, .signingInOnDevice, .exchanging, .saving, .signingOut, .fetchingProfile: false
        default: true
        }
    }

    /// Whether a sign-out asked for by another process is this state machine's to carry out: signed
    /// in, it is the Sign out button's; still reading what is stored, it is done once that is read.
    /// Otherwise whatever the store holds is cleared beside the window (`AppEffect.forgetSignIn`).
    public var carriesOutSignOut: Bool {
        switch self {
        case .starting: true
        default: isSignedIn
        }
    }

    public var isSignedIn: Bool {
        switch self {
        case .signedIn, .fetchingProfile, .profileLoaded: true
        case .failed(_, let signedIn): signedIn
        case .starting, .signedOut, .signingIn, .signingInOnDevice, .exchanging, .saving, .signingOut, .unavailable: false
        }
    }

    /// Whether `event` would do anything now: a click the state does not accept
    /// (a second Sign in while signing in) changes nothing and runs nothing.
    public func accepts(_ event: AppEvent) -> Bool {
        AppState.next(self, event) != Transition(state: self)
    }

    /// A state and what must be done on entering it.
    public struct Transition: Equatable, Sendable {
        public var state: AppState
        public var effects: [AppEffect]

        public init(state: AppState, effects: [AppEffect] = []) {
            self.state = state
            self.effects = effects
        }
    }

    /// The state after `event`, and the effects the app runs for it. Whenever Sign
    /// in becomes possible, the next sign-in is prepared.
    public static func next(_ state: AppState, _ event: AppEvent) -> Transition {
        var transition = step(state, event)
        if transition.state.acceptsSignIn, !state.acceptsSignIn || event == .userAgentChosen {
            transition.effects.append(.prepareSignIn)
        }
        // Who is signed in may have changed, or what is known of them: the accounts are shown again
        // (after an event the state took, not one it passed over).
        guard transition != Transition(state: state) else { return transition }
        switch event {
        case .launched, .signInSucceeded, .signInKeptApart, .profileLoaded, .sessionEnded, .providerUnavailable:
            transition.effects.append(.listAccounts)
        default: break
        }
        return transition
    }

    /// Whether a provider is ready: read, and neither starting nor unusable.
    public var hasProvider: Bool {
        switch self {
        case .starting, .unavailable: false
        default: true
        }
    }

    private var acceptsSignIn: Bool {
        switch self {
        case .signedOut, .failed(_, false): true
        default: false
        }
    }

    private static func step(_ state: AppState, _ event: AppEvent) -> Transition {
        switch (state, event) {
        // The same provider read again keeps a sign-out asked for meanwhile; another one first hands it on (`.leavingProvider`).
        case (.starting(let signOut), .providerChosen):
            return Transition(state: .starting(signOutOnceRead: signOut), effects: [.loadProvider])
        case (let current, .providerChosen) where current.allowsChoosingProvider:
            return Transition(state: .starting(), effects: [.loadProvider])
        case (let current, .accountChosen(let key)) where current.allowsChoosingProvider && current.hasProvider:
            return Transition(state: .starting(), effects: [.useAccount(key)])
        case (.starting(let signOut), .providerReady(let notice)):
            return Transition(state: .starting(signOutOnceRead: signOut), effects: [.readStoredSignIn(notice: notice)])
        default:
            return signingOutOnceRead(state, event) ?? settled(state, event)
        }
    }

    /// A sign-out asked for by another process while the stored sign-in was read: kept until the read
    /// answers, then done as the answer calls for.
    private static func signingOutOnceRead(_ state: AppState, _ event: AppEvent) -> Transition? {
        guard case .starting(let pending) = state else { return nil }
        switch event {
        case .signOutRequestedElsewhere:
            return Transition(state: .starting(signOutOnceRead: true))
        case .leavingProvider where pending:
            // For the provider being left: its store is cleared beside the window, which reads another.
            return Transition(state: .starting(), effects: [.forgetSignIn])
        case .launched(signedIn: true, _) where pending:
            return Transition(state: .signingOut, effects: [.signOut])
        case .launched(signedIn: false, let notice) where pending:
            return Transition(state: .signedOut(notice: notice), effects: [.forgetSignIn])
        case .providerUnavailable(let reason) where pending:
            return Transition(state: .unavailable(reason), effects: [.forgetSignIn])
        case .sessionEnded where pending:
            // A renewal begun before the read, refused: the read still answers, and the sign-out follows it.
            return Transition(state: state)
        default:
            return nil
        }
    }

    /// What the read (or a refused renewal) found, and everything else.
    private static func settled(_ state: AppState, _ event: AppEvent) -> Transition {
        switch (state, event) {
        case (let current, .providerUnavailable(let reason)) where current.allowsChoosingProvider:
            return Transition(state: .unavailable(reason))
        case (_, .launched(let signedIn, let notice)):
            return signedIn
                ? Transition(state: .signedIn(notice: notice), effects: [.renewIfDue]) : Transition(state: .signedOut(notice: notice))
        case (_, .sessionEnded(let reason)):
            let signingIn = state == .signingIn || state == .signingInOnDevice || state == .exchanging || state == .saving
            return Transition(state: signingIn ? state : .signedOut(notice: reason))
        default:
            return signingIn(state, event) ?? signedIn(state, event) ?? Transition(state: state)
        }
    }

    /// From Sign in to signed in, or to its failure.
    private static func signingIn(_ state: AppState, _ event: AppEvent) -> Transition? {
        switch (state, event) {
        case (let current, .signInRequested) where current.acceptsSignIn:
            return Transition(state: .signingIn, effects: [.signIn(.inUse)])
        case (let current, .addAccountRequested) where current.allowsChoosingProvider && current.hasProvider:
            return Transition(state: .signingIn, effects: [.signIn(.another)])
        case (let current, .deviceSignInRequested) where current.acceptsSignIn:
            return Transition(state: .signingInOnDevice, effects: [.signInOnDevice])
        case (.signingIn, .cancelRequested), (.signingInOnDevice, .cancelRequested):
            return Transition(state: state, effects: [.cancelSignIn])
        case (.signingIn, .redirectReceived):
            return Transition(state: .exchanging)
        case (.exchanging, .tokensReceived):
            return Transition(state: .saving)
        case (.signingIn, .signInSucceeded(let notice)), (.exchanging, .signInSucceeded(let notice)),
            (.saving, .signInSucceeded(let notice)), (.signingInOnDevice, .signInSucceeded(let notice)):
            return Transition(state: .signedIn(notice: notice))
        case (.signingIn, .signInKeptApart(let notice, let meantSignedIn)), (.exchanging, .signInKeptApart(let notice, let meantSignedIn)),
            (.saving, .signInKeptApart(let notice, let meantSignedIn)),
            (.signingInOnDevice, .signInKeptApart(let notice, let meantSignedIn)):
            // The account shown is the one meant, as it is: signed in still, or not (Sign in offered again).
            return Transition(state: meantSignedIn ? .signedIn(notice: notice) : .signedOut(notice: notice))
        case (.signingIn, .signInFailed(let error)), (.exchanging, .signInFailed(let error)),
            (.saving, .signInFailed(let error)), (.signingInOnDevice, .signInFailed(let error)):
            return Transition(state: .failed(message: error.description, signedIn: false))
        case (.signingIn, .addAccountFailed(let error, let signedIn)), (.exchanging, .addAccountFailed(let error, let signedIn)),
            (.saving, .addAccountFailed(let error, let signedIn)):
            return Transition(state: .failed(message: error.description, signedIn: signedIn))
        case (let current, .userAgentChosen) where current.acceptsSignIn:
            return Transition(state: current)
        default:
            // An event that does not fit the state (a double click, a late answer) changes nothing.
            return nil
        }
    }

    /// What a sign-in allows: the profile, opening it, signing out.
    private static func signedIn(_ state: AppState, _ event: AppEvent) -> Transition? {
        switch (state, event) {
        case (.signedIn, .profileRequested), (.profileLoaded, .profileRequested), (.failed(_, true), .profileRequested):
            return Transition(state: .fetchingProfile, effects: [.fetchProfile])
        case (.fetchingProfile, .profileLoaded(let profile)):
            return Transition(state: .profileLoaded(profile, notice: nil))
        case (.fetchingProfile, .profileFailed(let error)):
            if case .signedOut(let reason) = error { return Transition(state: .signedOut(notice: reason)) }
            return Transition(state: .failed(message: error.description, signedIn: true))
        case (.profileLoaded(let profile, _), .openProfileRequested):
            guard let url = profile.profileURL else { return nil }
            return Transition(state: state, effects: [.openProfile(url)])
        case (.profileLoaded(let profile, _), .profileOpened):
            return Transition(state: .profileLoaded(profile, notice: "Opened your profile in your web browser."))
        case (.profileLoaded(let profile, _), .profileOpenFailed(let message)):
            return Transition(state: .profileLoaded(profile, notice: message))
        case (let current, .signOutRequested) where current.isSignedIn, (let current, .signOutRequestedElsewhere) where current.isSignedIn:
            return Transition(state: .signingOut, effects: [.signOut])
        case (.signingOut, .signedOut(let notice)):
            // Another account may be in use now: its sign-in is read, and the notice said either way.
            return Transition(state: .starting(), effects: [.readStoredSignIn(notice: notice)])
        default:
            return nil
        }
    }
}
