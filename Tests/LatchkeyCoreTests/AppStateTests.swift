import Foundation
import OAuthCore
import Testing

@testable import LatchkeyCore

@Suite struct AppStateTests {
    let ada = Profile(
        name: "Ada Lovelace", email: "ada@sandbox.example", profileURL: URL(string: "http://127.0.0.1:4000/in/ada")!)

    func view(_ state: AppState) -> ViewModel {
        ViewModel(state: state, providerName: "Sandbox", storeName: "the keyring")
    }

    func run(_ events: [AppEvent], from state: AppState = .starting()) -> AppState {
        events.reduce(state) { AppState.next($0, $1).state }
    }

    @Test func launchSignedOutEnablesOnlySignIn() {
        let model = view(run([.launched(signedIn: false, notice: nil)]))
        #expect(model.signInEnabled)
        #expect(!model.getProfileEnabled)
        #expect(model.openProfileURL == nil)
        #expect(!model.signOutVisible)
        #expect(model.status.contains("Not signed in"))
        #expect(model.headline == "Not signed in")
    }

    /// While the saved sign-in is read, the window does not say there is none: a person signed in
    /// would read "Not signed in" at every launch, for as long as a locked keyring asks its password.
    @Test func whileTheSavedSignInIsReadNeitherSignedInNorOutIsSaid() {
        for state in [AppState.starting(), .starting(signOutOnceRead: true)] {
            let model = view(state)
            #expect(model.headline == "Checking your sign-in")
            #expect(!model.signInEnabled && !model.getProfileEnabled && !model.signOutVisible)
        }
    }

    /// What a sign-in allows is shown while signed in, and never while signed out.
    @Test func theScopesOfASignInAreShownWhileSignedIn() {
        let scopes = ["openid", "profile", "email"]
        let signedIn = ViewModel(state: .signedIn(notice: nil), providerName: "Sandbox", storeName: "the keyring", scopes: scopes)
        #expect(signedIn.scopesLine == "Allows: openid, profile, email")
        let loaded = ViewModel(state: .profileLoaded(ada, notice: nil), providerName: "Sandbox", storeName: "the keyring", scopes: scopes)
        #expect(loaded.scopesLine == "Allows: openid, profile, email")
        let out = ViewModel(state: .signedOut(notice: nil), providerName: "Sandbox", storeName: "the keyring", scopes: scopes)
        #expect(out.scopesLine == nil)
        #expect(view(.signedIn(notice: nil)).scopesLine == nil, "nothing said, nothing shown")
        // Tokens bound to a DPoP key: where the key is kept is said beneath.
        let bound = ViewModel(
            state: .signedIn(notice: nil), providerName: "Sandbox", storeName: "the keyring", scopes: scopes,
            keyKept: "in the TPM, which never lets it out")
        #expect(
            bound.scopesLine == "Allows: openid, profile, email\nIts tokens are bound to a key kept in the TPM, which never lets it out.")
        #expect(
            ViewModel(state: .signedOut(notice: nil), providerName: "Sandbox", storeName: "the keyring", keyKept: "in the TPM").scopesLine
                == nil)
    }

    /// Issue 28: "Sign in on another device" waits with the code shown, and ends as any sign-in does.
    @Test func signingInOnAnotherDevice() {
        let signedOut = run([.launched(signedIn: false, notice: nil)])
        let waiting = AppState.next(signedOut, .deviceSignInRequested)
        #expect(waiting.state == .signingInOnDevice && waiting.effects == [.signInOnDevice])
        let model = view(waiting.state)
        #expect(!model.signInEnabled && !model.providerChoiceEnabled && model.busy)
        #expect(model.status == "Waiting for you to sign in with Sandbox on your other device…")
        #expect(!waiting.state.accepts(.signInRequested) && !waiting.state.accepts(.deviceSignInRequested), "one sign-in at a time")
        #expect(AppState.next(waiting.state, .cancelRequested) == .init(state: .signingInOnDevice, effects: [.cancelSignIn]))
        #expect(run([.signInSucceeded(notice: nil)], from: waiting.state) == .signedIn(notice: nil))
        let refused = run([.signInFailed(.deviceSignInDenied)], from: waiting.state)
        #expect(refused == .failed(message: OAuthError.deviceSignInDenied.description, signedIn: false))
        #expect(AppState.next(refused, .deviceSignInRequested).effects.contains(.signInOnDevice), "and may be tried again")
        #expect(!AppState.next(.signedIn(notice: nil), .deviceSignInRequested).effects.contains(.signInOnDevice))
    }

    @Test func whileStartingNothingCanBePressed() {
        let model = view(.starting())
        #expect(!model.signInEnabled && !model.getProfileEnabled && !model.signOutVisible)
        #expect(model.busy)
    }

    @Test func theHappyPath() {
        var state = run([.launched(signedIn: false, notice: nil), .signInRequested])
        #expect(state == .signingIn)
        #expect(view(state).busy && !view(state).signInEnabled)
        state = run([.redirectReceived, .tokensReceived], from: state)
        #expect(state == .saving)
        #expect(view(state).busy && view(state).status.contains("Saving your sign-in in the keyring"))
        state = run([.signInSucceeded(notice: nil)], from: state)
        #expect(state == .signedIn(notice: nil))
        #expect(!view(state).signInEnabled)
        #expect(view(state).getProfileEnabled)
        #expect(view(state).status.contains("the keyring"), "the status line says where tokens are kept")
        state = run([.profileRequested], from: state)
        #expect(state == .fetchingProfile)
        #expect(!view(state).getProfileEnabled, "no second fetch while one runs")
        state = run([.profileLoaded(ada)], from: state)
        let model = view(state)
        #expect(model.openProfileURL == "http://127.0.0.1:4000/in/ada")
        #expect(model.profile?.name == "Ada Lovelace")
        #expect(model.status.contains("as Ada Lovelace"))
        #expect(model.headline == "Ada Lovelace")
        #expect(model.subline == "ada@sandbox.example")
        state = run([.profileOpened], from: state)
        #expect(view(state).openProfileURL == "http://127.0.0.1:4000/in/ada")
        #expect(view(state).status.contains("web browser"))
    }

    @Test func launchSignedInGoesStraightToSignedIn() {
        let model = view(run([.launched(signedIn: true, notice: nil)]))
        #expect(!model.signInEnabled)
        #expect(model.getProfileEnabled)
        #expect(model.signOutVisible)
    }

    @Test func cancellingTheSignInSaysSoAndAllowsAnother() {
        let state = run([.launched(signedIn: false, notice: nil), .signInRequested, .signInFailed(.cancelled)])
        #expect(view(state).status == "Sign-in cancelled.")
        #expect(view(state).signInEnabled)
        #expect(!view(state).isError, "cancelling is not an error")
        #expect(AppState.next(state, .signInRequested).state == .signingIn)
    }

    @Test func aFailedExchangeExplainsAndAllowsAnother() {
        let state = run([
            .launched(signedIn: false, notice: nil), .signInRequested, .redirectReceived,
            .signInFailed(.httpStatus(500, endpoint: .token)),
        ])
        #expect(view(state).status.contains("had a problem (HTTP 500)"))
        #expect(view(state).isError)
        #expect(view(state).signInEnabled)
        #expect(!view(state).getProfileEnabled)
    }

    @Test func aSignInKeptElsewhereSaysWhere() {
        let notice = "The keyring did not answer within 60 s. Your sign-in is kept in a private file instead."
        let state = run([
            .launched(signedIn: false, notice: nil), .signInRequested, .redirectReceived, .tokensReceived,
            .signInSucceeded(notice: notice),
        ])
        #expect(state.isSignedIn)
        #expect(view(state).status == notice)
        #expect(view(state).getProfileEnabled)
    }

    @Test func aStoreThatFailsWhileSavingEndsTheSignInWithItsSentence() {
        let state = run([
            .launched(signedIn: false, notice: nil), .signInRequested, .redirectReceived, .tokensReceived,
            .signInFailed(.storage("cannot write the file (No space left on device).")),
        ])
        #expect(view(state).status.contains("No space left on device"))
        #expect(view(state).signInEnabled)
    }

    @Test func aFailedProfileKeepsTheSignIn() {
        let state = run([.launched(signedIn: true, notice: nil), .profileRequested, .profileFailed(.timedOut(endpoint: .profile))])
        #expect(view(state).getProfileEnabled)
        #expect(!view(state).signInEnabled)
        #expect(view(state).status.contains("took too long"))
    }

    @Test func aProfileRefusedForGoodSignsOutWithTheReason() {
        let state = run([
            .launched(signedIn: true, notice: nil), .profileRequested,
            .profileFailed(.signedOut(reason: "Sandbox no longer accepts your sign-in. Sign in again.")),
        ])
        #expect(state == .signedOut(notice: "Sandbox no longer accepts your sign-in. Sign in again."))
        #expect(view(state).signInEnabled)
    }

    @Test func anImpossibleRefreshAtLaunchSignsOutWithAMessage() {
        let state = run([.launched(signedIn: true, notice: nil), .sessionEnded("Your sign-in has expired.")])
        #expect(view(state).status == "Your sign-in has expired.")
        #expect(view(state).signInEnabled)
    }

    @Test func signingOutReturnsToSignedOut() {
        var state = run([.launched(signedIn: true, notice: nil), .profileRequested, .profileLoaded(ada), .signOutRequested])
        #expect(state == .signingOut)
        #expect(view(state).openProfileURL == nil)
        state = AppState.next(state, .signedOut(notice: nil)).state
        #expect(state == .starting(), "the sign-in left (another account's, or none) is read")
        state = AppState.next(state, .launched(signedIn: false, notice: nil)).state
        #expect(view(state).signInEnabled)
        #expect(!view(state).signOutVisible)
    }

    @Test func eventsThatDoNotFitChangeNothing() {
        let signedOut = AppState.signedOut(notice: nil)
        #expect(AppState.next(signedOut, .profileRequested) == AppState.Transition(state: signedOut))
        #expect(AppState.next(signedOut, .signOutRequested) == AppState.Transition(state: signedOut))
        #expect(
            AppState.next(.signingIn, .signInRequested) == AppState.Transition(state: .signingIn), "a second click opens no second window")
        #expect(AppState.next(.signedIn(notice: nil), .signInSucceeded(notice: nil)) == AppState.Transition(state: .signedIn(notice: nil)))
        #expect(AppState.next(.signingIn, .tokensReceived) == AppState.Transition(state: .signingIn))
        #expect(AppState.next(.signedIn(notice: nil), .redirectReceived) == AppState.Transition(state: .signedIn(notice: nil)))
    }

    @Test func aClickIsAcceptedOnlyWhereItChangesSomething() {
        #expect(AppState.signedOut(notice: nil).accepts(.signInRequested))
        #expect(AppState.failed(message: "x", signedIn: false).accepts(.signInRequested))
        #expect(!AppState.signingIn.accepts(.signInRequested), "no second sign-in window")
        #expect(!AppState.exchanging.accepts(.signInRequested))
        #expect(!AppState.signedIn(notice: nil).accepts(.signInRequested))
        #expect(AppState.signedIn(notice: nil).accepts(.profileRequested))
        #expect(!AppState.fetchingProfile.accepts(.profileRequested), "no second fetch")
        #expect(AppState.signedIn(notice: nil).accepts(.signOutRequested))
        #expect(!AppState.signingOut.accepts(.signOutRequested), "no second sign-out")
        #expect(!AppState.starting().accepts(.signInRequested), "nothing before the store was read")
    }

    @Test func aProfileWithoutURLKeepsOpenProfileHiddenAndSaysWhy() {
        let linkedIn = Profile(name: "Lin", note: "LinkedIn gives a profile link only to approved apps.")
        let model = view(run([.launched(signedIn: true, notice: nil), .profileRequested, .profileLoaded(linkedIn)]))
        #expect(model.openProfileURL == nil)
        #expect(model.profile?.note == "LinkedIn gives a profile link only to approved apps.")
    }

    // MARK: What the app does, as the state machine says

    func effects(_ events: [AppEvent], from state: AppState = .starting()) -> [[AppEffect]] {
        var state = state
        return events.map { event in
            let transition = AppState.next(state, event)
            state = transition.state
            return transition.effects
        }
    }

    @Test func choosingAProviderLoadsItThenReadsItsSignInThenPreparesTheNext() {
        #expect(
            effects([.providerChosen, .providerReady(notice: "set up"), .launched(signedIn: false, notice: nil)]) == [
                [.loadProvider], [.readStoredSignIn(notice: "set up")], [.prepareSignIn, .listAccounts],
            ])
        #expect(
            effects([.providerChosen, .providerReady(notice: nil), .launched(signedIn: true, notice: nil)]).last == [
                .renewIfDue, .listAccounts,
            ],
            "signed in at launch: renewed quietly when due, and no sign-in prepared")
    }

    // MARK: `latchkey --sign-out` while the window still reads the provider shown

    @Test func aSignOutAskedForWhileReadingWaitsForTheRead() {
        let asked = AppState.next(.starting(), .signOutRequestedElsewhere)
        #expect(asked == AppState.Transition(state: .starting(signOutOnceRead: true)), "nothing runs beside the read")
        #expect(AppState.starting().carriesOutSignOut && AppState.signedIn(notice: nil).carriesOutSignOut)
        #expect(!AppState.signedOut(notice: nil).carriesOutSignOut && !AppState.unavailable("x").carriesOutSignOut)
        #expect(!asked.state.accepts(.signOutRequestedElsewhere), "asked twice, done once")
        #expect(!AppState.starting().accepts(.signOutRequested), "the button does nothing before the store was read")
        // Signed in, a sign-out from elsewhere is the button's.
        #expect(
            AppState.next(.signedIn(notice: nil), .signOutRequestedElsewhere)
                == AppState.Transition(state: .signingOut, effects: [.signOut]))
        // Kept while the provider is made ready and its sign-in read, then done by the path the answer calls for.
        #expect(
            effects([.providerReady(notice: nil), .launched(signedIn: true, notice: nil)], from: asked.state) == [
                [.readStoredSignIn(notice: nil)], [.signOut, .listAccounts],
            ])
        #expect(
            AppState.next(asked.state, .launched(signedIn: false, notice: nil))
                == AppState.Transition(state: .signedOut(notice: nil), effects: [.forgetSignIn, .prepareSignIn, .listAccounts]),
            "no sign-in of the window's: what the store holds is cleared, and Sign in offered")
        #expect(
            AppState.next(asked.state, .providerUnavailable("Not set up."))
                == AppState.Transition(state: .unavailable("Not set up."), effects: [.forgetSignIn, .listAccounts]))
        // A renewal begun before the read and refused meanwhile: the read still answers, and decides.
        #expect(AppState.next(asked.state, .sessionEnded("Expired.")) == AppState.Transition(state: asked.state))
        // Clicks and choices the state does not take leave the request as it is.
        let ignored: [AppEvent] = [
            .userAgentChosen, .accountChosen("sandbox@ab12"), .addAccountRequested, .signInRequested, .signOutRequested,
        ]
        #expect(run(ignored + [.providerReady(notice: nil), .launched(signedIn: true, notice: nil)], from: asked.state) == .signingOut)
    }

    @Test func aSignOutAskedForWhileReadingStaysWithTheProviderItNamed() {
        let asked = AppState.starting(signOutOnceRead: true)
        // Another provider chosen: the sign-out goes to the background for the one left; the next is read as it is.
        #expect(AppState.next(asked, .leavingProvider) == AppState.Transition(state: .starting(), effects: [.forgetSignIn]))
        #expect(
            run([.leavingProvider, .providerChosen, .providerReady(notice: nil), .launched(signedIn: true, notice: nil)], from: asked)
                == .signedIn(notice: nil))
        // The same provider read again: still to be signed out.
        #expect(AppState.next(asked, .providerChosen) == AppState.Transition(state: asked, effects: [.loadProvider]))
        // Leaving a provider nobody asked to sign out of does nothing.
        #expect(AppState.next(.starting(), .leavingProvider) == AppState.Transition(state: .starting()))
        #expect(AppState.next(.signedIn(notice: nil), .leavingProvider) == AppState.Transition(state: .signedIn(notice: nil)))
    }

    @Test func aProviderReadyForAnotherStateRunsNothing() {
        #expect(AppState.next(.signedIn(notice: nil), .providerReady(notice: nil)) == AppState.Transition(state: .signedIn(notice: nil)))
        #expect(AppState.next(.signingIn, .providerChosen) == AppState.Transition(state: .signingIn), "no other provider mid-sign-in")
    }

    @Test func eachClickRunsItsWorkOnceAndASecondClickNothing() {
        #expect(effects([.signInRequested, .signInRequested], from: .signedOut(notice: nil)) == [[.signIn(.inUse)], []])
        #expect(effects([.profileRequested, .profileRequested], from: .signedIn(notice: nil)) == [[.fetchProfile], []])
        #expect(effects([.signOutRequested, .signOutRequested], from: .signedIn(notice: nil)) == [[.signOut], []])
        #expect(effects([.cancelRequested], from: .signingIn) == [[.cancelSignIn]])
        #expect(effects([.cancelRequested], from: .exchanging) == [[]], "the code is on its way: too late to cancel")
    }

    /// Issue 27: another account added beside the one in use, or chosen from the list.
    @Test func accountsAreAddedAndChosen() {
        #expect(effects([.addAccountRequested], from: .signedIn(notice: nil)) == [[.signIn(.another)]])
        #expect(effects([.addAccountRequested], from: .signedOut(notice: nil)) == [[.signIn(.another)]])
        #expect(effects([.addAccountRequested], from: .fetchingProfile) == [[]], "not while the profile is asked for")
        #expect(effects([.addAccountRequested], from: .starting()) == [[]])
        // Adding failed: the account in use is as it was, signed in or not.
        let failed = run([.addAccountRequested, .addAccountFailed(.cancelled, signedIn: true)], from: .signedIn(notice: nil))
        #expect(failed == .failed(message: OAuthError.cancelled.description, signedIn: true) && failed.isSignedIn)
        let alone = run([.addAccountRequested, .addAccountFailed(.cancelled, signedIn: false)], from: .signedOut(notice: nil))
        #expect(!alone.isSignedIn)
        // Another account chosen: it is made the one in use, then its sign-in read as at a launch.
        #expect(
            effects(
                [.accountChosen("sandbox@ab12"), .providerReady(notice: nil), .launched(signedIn: true, notice: nil)],
                from: .signedIn(notice: nil))
                == [[.useAccount("sandbox@ab12")], [.readStoredSignIn(notice: nil)], [.renewIfDue, .listAccounts]])
        #expect(effects([.accountChosen("sandbox@ab12")], from: .signingIn) == [[]], "not mid-sign-in")
        #expect(!AppState.signingIn.accepts(.accountChosen("x")) && AppState.signedOut(notice: nil).accepts(.accountChosen("x")))
    }

    @Test func signInBecomingPossibleAgainPreparesTheNextOne() {
        #expect(
            effects([.signInRequested, .signInFailed(.cancelled)], from: .signedOut(notice: nil)) == [[.signIn(.inUse)], [.prepareSignIn]])
        #expect(effects([.sessionEnded("expired")], from: .signedIn(notice: nil)) == [[.prepareSignIn, .listAccounts]])
        // Signed out, another account may be in use: its sign-in is read, the notice said either way.
        #expect(
            effects([.signOutRequested, .signedOut(notice: "Signed out.")], from: .signedIn(notice: nil)) == [
                [.signOut], [.readStoredSignIn(notice: "Signed out.")],
            ])
        #expect(
            effects([.signInRequested, .redirectReceived, .signInSucceeded(notice: nil)], from: .signedOut(notice: nil)).last == [
                .listAccounts
            ])
    }

    @Test func choosingWhereToSignInPreparesThatAgentOnlyWhenSignInIsPossible() {
        #expect(effects([.userAgentChosen], from: .signedOut(notice: nil)) == [[.prepareSignIn]])
        #expect(effects([.userAgentChosen], from: .signedIn(notice: nil)) == [[]])
        #expect(!AppState.signedIn(notice: nil).accepts(.userAgentChosen))
    }

    @Test func openProfileOpensTheProfilesOwnLinkAndOnlyThat() {
        #expect(effects([.openProfileRequested], from: .profileLoaded(ada, notice: nil)) == [[.openProfile(ada.profileURL!)]])
        let withoutLink = Profile(name: "Lin")
        #expect(effects([.openProfileRequested], from: .profileLoaded(withoutLink, notice: nil)) == [[]])
        #expect(effects([.openProfileRequested], from: .signedIn(notice: nil)) == [[]])
    }
}

@Suite struct SetUpFollowUpTests {
    @Test func aProviderSetUpIsAnnouncedOnceWhenItIsReady() {
        var followUp = SetUpFollowUp()
        followUp.done(id: "github", notice: "GitHub is set up.", added: false)
        #expect(followUp.loaded("other", usable: true) == (false, nil), "another provider is not announced")
        followUp.done(id: "github", notice: "GitHub is set up.", added: false)
        #expect(followUp.loaded("github", usable: true) == (false, "GitHub is set up."))
        #expect(followUp.loaded("github", usable: true) == (false, nil), "said once")
    }

    @Test func aProviderAddedWithoutCredentialsOpensItsSetUpOnce() {
        var followUp = SetUpFollowUp()
        followUp.done(id: "corp", notice: nil, added: true)
        #expect(followUp.loaded("corp", usable: false) == (true, nil))
        #expect(followUp.loaded("corp", usable: false) == (false, nil), "not again on the next load")
        followUp.done(id: "corp", notice: nil, added: false)
        #expect(followUp.loaded("corp", usable: false) == (false, nil), "set up, not added: the status says what it lacks")
    }

    @Test func aSentenceWaitsThroughAFailedLoadOfItsProvider() {
        var followUp = SetUpFollowUp()
        followUp.done(id: "corp", notice: "Corp is set up.", added: true)
        #expect(followUp.loaded("corp", usable: false) == (true, nil))
        #expect(followUp.loaded("corp", usable: true) == (false, "Corp is set up."))
    }
}
