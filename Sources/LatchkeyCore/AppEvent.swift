import OAuthCore

/// What moves the app from one state to the next: a click, or OAuthCore's answer.
public enum AppEvent: Equatable, Sendable {
    case launched(signedIn: Bool, notice: String?)
    /// Another provider was chosen: it is being made usable.
    case providerChosen
    /// The chosen provider can be used; its stored sign-in is read next.
    /// `notice`: what to say once it is read, in place of the usual sentence.
    case providerReady(notice: String?)
    /// The chosen provider cannot be used as it is (not set up, a broken file): the sentence says why.
    case providerUnavailable(String)
    case signInRequested
    /// "Sign in on another device" (RFC 8628): a code to type elsewhere, and a wait for the answer.
    case deviceSignInRequested
    /// Add another account: a sign-in at which the provider lets the person choose.
    case addAccountRequested
    /// Another of the provider's accounts was chosen (its key): it is in use from now on.
    case accountChosen(String)
    /// Cancel, while the browser has the sign-in.
    case cancelRequested
    /// The person chose where to sign in (this window or the browser).
    case userAgentChosen
    case redirectReceived
    /// The code was exchanged; the tokens are being saved.
    case tokensReceived
    /// Signed in; the notice says where the tokens went when not where they usually go.
    case signInSucceeded(notice: String?)
    case signInFailed(OAuthError)
    /// The sign-in came back as someone else than the account meant: their tokens were kept as an
    /// account of their own, and the account meant is as it was (`meantSignedIn`). The notice says so.
    case signInKeptApart(notice: String, meantSignedIn: Bool)
    /// Adding an account did not finish; `signedIn`: whether the account in use is still signed in.
    case addAccountFailed(OAuthError, signedIn: Bool)
    case profileRequested
    case profileLoaded(Profile)
    case profileFailed(OAuthError)
    case openProfileRequested
    case profileOpened
    case profileOpenFailed(String)
    /// The Sign out button.
    case signOutRequested
    /// Another process asked to sign out of the provider shown (`latchkey --sign-out`): as the button
    /// while signed in; while the stored sign-in is still read, once it is (`AppState.starting`).
    case signOutRequestedElsewhere
    /// Another provider is about to be shown in place of this one.
    case leavingProvider
    case signedOut(notice: String?)
    /// The stored sign-in can no longer be used (a refresh was refused).
    case sessionEnded(String)
}
