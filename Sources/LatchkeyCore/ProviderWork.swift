import AgentCore
import FoundationEssentials
import Logging
import OAuthCore

/// What the app's effects do with the provider shown, each answered with the
/// event the state machine takes next. The app runs these off its GTK thread;
/// here, they are tested against a real provider without a display.
extension Provider {
    /// `.readStoredSignIn`: whether a sign-in is stored (once the provider can be reached),
    /// and what it allows. `notice`: said in place of the usual sentence.
    public func storedSignIn(notice: String?) async -> (event: AppEvent, scopes: [String]) {
        do { try await waitUntilReachable() } catch { return (.launched(signedIn: false, notice: "\(error)"), []) }
        let session = self.session
        let (signedIn, warning) = (await session.isSignedIn, await session.storeWarning ?? notice)
        let scopes = await session.currentToken()?.allowedScopes(asked: session.configuration.scopes) ?? []
        return (.launched(signedIn: signedIn, notice: warning), scopes)
    }

    /// `.renewIfDue`: a refusal ends the sign-in; a passing failure keeps it (Get my profile tries again).
    public func renewal(logger: Logger) async -> AppEvent? {
        do {
            _ = try await freshToken()
        } catch OAuthError.signedOut(let reason) {
            return .sessionEnded(reason)
        } catch {
            logger.notice("Could not renew the sign-in at launch", metadata: ["error": "\(error)"])
        }
        return nil
    }

    /// `.signIn` through `agent`, as the account in use or another (`choice`), its steps told to
    /// `step` as they happen; and what it allows.
    public func signIn(
        using agent: some ExternalUserAgent, for choice: AccountChoice = .inUse, logger: Logger,
        step: @escaping @Sendable (AppEvent) -> Void
    ) async -> (event: AppEvent, scopes: [String]) {
        let signInHere = {
            await self.answer(for: choice, logger: logger) {
                try await self.signIn(using: agent, for: choice) { step($0 == .redirectReceived ? .redirectReceived : .tokensReceived) }
            }
        }
        guard configuration.grant.mints, choice == .inUse else { return await signInHere() }
        let minted = await minted(logger: logger)
        // The identity provider refused (or nobody is signed in there), on a server with a sign-in of
        // its own: that one, after saying why.
        guard case .signInFailed(.signedOut(let reason)) = minted.event, configuration.grant == .idJAG, configuration.hasSignInPage
        else { return minted }
        let own = await signInHere()
        guard case .signInSucceeded(let notice) = own.event else { return own }
        let said = ([reason, "Signed in at the server itself."] + [notice].compactMap { $0 }).joined(separator: " ")
        return (.signInSucceeded(notice: said), own.scopes)
    }

    /// Sign in, where nobody signs in here: the client's own token, or one had through the
    /// organisation's identity provider, with no page of this server's; its refusal said.
    private func minted(logger: Logger) async -> (event: AppEvent, scopes: [String]) {
        do {
            let token = try await session.freshToken()
            let through =
                configuration.grant == .idJAG
                ? "Signed in through your organisation's identity provider, with no page of this server's."
                : "This client's own token: nobody signs in."
            return (.signInSucceeded(notice: through), token.allowedScopes(asked: configuration.scopes))
        } catch {
            let failure = error as? OAuthError ?? .userAgent("\(error)")
            logger.notice("No token was had", metadata: ["error": "\(failure)"])
            return (.signInFailed(failure), [])
        }
    }

    /// `.signInOnDevice`: a code asked for and handed to `show` (the window's dialog), then the wait
    /// for the person to answer on their other device (RFC 8628); and what the sign-in allows.
    public func signInOnDevice(
        show: @escaping @Sendable (DeviceAuthorization) async -> Void, logger: Logger
    ) async -> (event: AppEvent, scopes: [String]) {
        await answer(for: .inUse, logger: logger) { try await signInOnDevice(for: .inUse, show: show) }
    }

    /// A sign-in's outcome as the state machine takes it: the event, its notice, what it allows.
    private func answer(
        for choice: AccountChoice, logger: Logger, signIn: () async throws -> AuthSession.SignInOutcome
    ) async -> (event: AppEvent, scopes: [String]) {
        do {
            let outcome = try await signIn()
            if let change = outcome.accountChange { logger.notice("\(change)") }
            // Another person than meant is said first: someone else may have completed this sign-in.
            let added =
                choice == .another
                ? outcome.account.map {
                    outcome.isNewAccount
                        ? "Added \($0.label)."
                        : "\($0.label) was already here: signed in again. To add another, sign out at the provider's page first."
                } : nil
            let notice = [outcome.accountChange?.description, added, outcome.storeNotice].compactMap { $0 }.joined(separator: " ")
            if outcome.accountChange?.keptApart == true {
                // Someone else than the account meant: the window goes on showing the account meant, as it is.
                let meant: AuthSession
                if case .account(let key) = choice { meant = session(key: key) } else { meant = session }
                let signedIn = await meant.isSignedIn
                let scopes = signedIn ? await meant.currentToken()?.allowedScopes(asked: configuration.scopes) ?? [] : []
                return (.signInKeptApart(notice: notice, meantSignedIn: signedIn), scopes)
            }
            let scopes = outcome.token.allowedScopes(asked: configuration.scopes)
            return (.signInSucceeded(notice: notice.isEmpty ? nil : notice), scopes)
        } catch {
            let failure = error as? OAuthError ?? .userAgent("\(error)")
            logger.notice("Sign-in did not complete", metadata: ["error": "\(failure)"])
            guard choice == .another else { return (.signInFailed(failure), []) }
            // The account in use is as it was: still signed in, or not.
            return (.addAccountFailed(failure, signedIn: await session.isSignedIn), [])
        }
    }

    /// `.useAccount`: account `key` is in use from now on (a small file written off GTK's thread).
    public func useAccountEvent(_ key: String) async -> AppEvent {
        await BlockingWork.run { self.use(account: key) }
        return .providerReady(notice: nil)
    }

    /// `.fetchProfile`: the profile, and its picture's bytes when it has one.
    public func profileEvent() async -> (event: AppEvent, picture: [UInt8]?) {
        do {
            let profile = try await profile()
            return (.profileLoaded(profile), await picture(at: profile.pictureURL))
        } catch {
            return (.profileFailed(error as? OAuthError ?? .network(endpoint: .profile, reason: "\(error)")), nil)
        }
    }

    /// The picture's bytes, or nil: a missing picture is not worth an error.
    public func picture(at url: URL?) async -> [UInt8]? {
        guard let url else { return nil }
        let response = try? await network.transport.send(
            HTTPRequest(method: "GET", url: url, headers: ["User-Agent": OAuthCoreInfo.userAgent], timeout: min(10, network.timeout)))
        guard let response, response.status == 200, response.body.count < 5_000_000 else { return nil }
        return [UInt8](response.body)
    }

    /// `.signOut`: the account in use signed out here whatever the provider says (and taken off the
    /// list); its trouble is the notice. Another account, if there is one, is in use next.
    public func signOutEvent() async -> AppEvent {
        let name = configuration.displayName
        let entry = await accounts()
        let who = entry.accounts.count > 1 ? entry.current.map { " as \($0.label)" } ?? "" : ""
        return .signedOut(notice: await signOutForgettingPrograms() ?? "Signed out of \(name)\(who).")
    }

    /// Signs out of the account in use, and forgets the programs allowed for it (its key is the next
    /// person's): every way of signing out in the app and the command goes through here.
    public func signOutForgettingPrograms(_ grants: ProgramGrants = LatchkeyFiles.allowedPrograms) async -> String? {
        let key = accountInUseKey
        let outcome = await signOut(account: key)
        do { try grants.forgetAccount(key) } catch {
            network.logger.warning("The programs allowed for the account could not be forgotten: \(error)")
        }
        return outcome
    }
}
