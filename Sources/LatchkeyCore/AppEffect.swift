import FoundationEssentials
import OAuthCore

/// What the app must do after a transition, chosen by `AppState.next` and run by
/// the app's controller, the way async-http-client's state machines return actions:
/// the state machine decides, the controller only carries it out and sends back
/// what came of it as the next `AppEvent`.
public enum AppEffect: Equatable, Sendable {
    /// Make the provider just chosen usable (its files, its client secret, the sandbox child);
    /// answers `.providerReady` or `.providerUnavailable`.
    case loadProvider
    /// Read the stored sign-in (the keyring may take a moment); answers `.launched`.
    /// `notice`: what to say once it is read, in place of the usual sentence.
    case readStoredSignIn(notice: String?)
    /// Renew the stored sign-in quietly if it is about to expire; answers `.sessionEnded` if the provider refuses.
    case renewIfDue
    /// Sign in has just become possible: have the next sign-in ready (its web view, libcurl).
    case prepareSignIn
    /// Sign in with the chosen user agent, as the account in use or as another one; answers with its
    /// steps and `.signInSucceeded`, or `.signInFailed` (`.addAccountFailed` for another account).
    case signIn(AccountChoice)
    /// Ask for a code, show it, and wait for the person to sign in on another device.
    case signInOnDevice
    /// Make account `key` the one in use; answers `.providerReady`, after which its sign-in is read.
    case useAccount(String)
    /// Show the provider's accounts as they are now (after a sign-in, a sign-out, a profile).
    case listAccounts
    /// Stop the sign-in under way; it then ends as cancelled.
    case cancelSignIn
    /// Fetch the profile; answers `.profileLoaded` or `.profileFailed`.
    case fetchProfile
    /// Show the profile in the default browser; answers `.profileOpened` or `.profileOpenFailed`.
    case openProfile(URL)
    /// Sign out (and revoke); answers `.signedOut`.
    case signOut
    /// Clear (and revoke) whatever the store holds for the provider shown, beside the window, which
    /// shows it signed out or unusable already: a sign-out another process asked for, found to have
    /// no sign-in of the window's to end. Answers nothing.
    case forgetSignIn
}
