import FoundationEssentials

/// Which account a sign-in is meant for.
public enum AccountChoice: Sendable, Equatable {
    /// The account in use (the first sign-in, while there is none).
    case inUse
    /// Account `key`, signed in again.
    case account(String)
    /// Another account: the provider is asked to let the person choose.
    case another
}

/// A provider's accounts: any number of people's sign-ins with it, each kept under its own key
/// (`Account.key`), one of them in use. What a sign-in returns is kept as the account whose subject
/// it names — never over another person's tokens.
extension Provider {
    /// The key of the account in use, as the list says now; the provider's id while it lists none.
    public var accountInUseKey: String { listedEntry.current?.key ?? configuration.id }

    /// The list as its file says now, read again only when the file changed (a `stat` per use).
    var listedEntry: AccountList.Entry {
        guard let accountList else { return AccountList.Entry() }
        let file = accountList.file(for: configuration.id)
        let stamp = FileStamp(of: file.path)
        return listed.withLock { cached in
            if let cached, stamp != nil, cached.stamp == stamp { return cached.entry }
            let entry = accountList.entry(for: configuration.id)
            cached = (stamp, entry)
            return entry
        }
    }

    /// Every account, the one in use among them.
    ///
    /// A sign-in kept under the provider's id that the list does not name — one an earlier release
    /// made, which kept one sign-in per provider — becomes the first account here. Its tokens stay
    /// where they are (the first account's key is the provider's id), so nothing is moved and
    /// nothing can be lost; who it is comes from what that release noted, or its ID token.
    public func accounts() async -> AccountList.Entry {
        guard let accountList else { return AccountList.Entry() }
        let id = configuration.id
        let entry = listedEntry
        guard entry.fromEarlierRelease || entry.account(key: id) == nil else { return entry }
        let first = session(key: id)
        let token = await first.currentToken()
        // The store could not be read (a keyring that did not answer): nothing is concluded from that.
        if token == nil, await first.storeWarning != nil { return entry }
        return accountList.update(id) { entry in
            let noted = entry.fromEarlierRelease ? entry.account(key: id) : nil
            // The earlier release's note outlived sign-outs: it is an account only with a sign-in beside
            // it; without one, it is who was signed out of last.
            if entry.fromEarlierRelease { entry.accounts.removeAll { $0.key == id } }
            if token == nil, let noted { entry.lastSignedOut = noted }
            guard let token, entry.account(key: id) == nil else { return }
            var account = noted ?? Account(key: id)
            if let claims = token.idToken.flatMap(IDTokenClaims.claims(of:)), let subject = claims["sub"]?.string, !subject.isEmpty {
                let digest = Account.digest(ofSubject: subject)
                if account.subject != digest { account = Account(key: id, subject: digest) }
                account.email = account.email ?? Account.shown(claims["email"]?.string)
                account.name = account.name ?? Account.shown(AuthSession.accountName(in: claims))
            }
            entry.accounts.insert(account, at: 0)
        }.entry
    }

    /// Makes account `key` the one in use (for the window, scripts and the agent alike).
    public func use(account key: String) {
        accountList?.update(configuration.id) { entry in
            if entry.account(key: key) != nil { entry.inUse = key }
        }
    }

    /// The session of the account `name` names (an e-mail address or a name, as the window shows
    /// it; see `Account.matches`), or of the account in use when `name` is nil.
    public func session(forAccount name: String?) async throws -> AuthSession {
        guard let name, !name.isEmpty else { return session }
        return session(key: try await accounts().key(forAccount: name, of: configuration.id, displayName: configuration.displayName))
    }

    /// What a sign-in says of the person.
    struct Person {
        var subject: String?
        var name: String?
        var email: String?
        var loginHint: String?
        var pictureURL: URL?
        /// Why who signed in could not be found out (the profile's failure), when it could not.
        var problem: String?
    }

    /// `signIn(using:for:progress:)` once the provider's client is settled.
    func signInAsAccount(
        using agent: some ExternalUserAgent, for choice: AccountChoice,
        progress: @escaping @Sendable (AuthSession.SignInStep) -> Void
    ) async throws -> AuthSession.SignInOutcome {
        try await keepSignIn(for: choice) { session, meant in
            let parameters = session.configuration.accountChoiceParameters(loginHint: meant?.loginHint, choosing: choice == .another)
            let authorized = try await session.authorize(using: agent, accountParameters: parameters, progress: progress)
            progress(.tokensReceived)
            return authorized
        }
    }

    /// The tokens `obtain` brings (through the session of the account meant, which it may use to ask),
    /// kept as the account they turn out to be: see `signIn(using:for:progress:)`.
    func keepSignIn(
        for choice: AccountChoice, obtain: (_ session: AuthSession, _ meant: Account?) async throws -> Token
    ) async throws -> AuthSession.SignInOutcome {
        let entry = await accounts()
        let meant: Account? =
            switch choice {
            case .inUse: entry.current
            case .account(let key): entry.account(key: key)
            case .another: nil
            }
        let session = self.session(key: meant?.key ?? accountInUseKey)
        let authorized = try await obtain(session, meant)
        let (token, person) = await identify(authorized)
        guard !Task.isCancelled else { throw OAuthError.cancelled }
        guard let accountList else {
            return AuthSession.SignInOutcome(token: token, storeNotice: try await session.signIn(with: token))
        }
        let (kept, isNew) = try keep(person, meant: meant, in: accountList)
        let notice: String?
        do {
            notice = try await self.session(key: kept.key).signIn(with: token)
        } catch {
            // Not kept: a new account does not stay listed without its tokens.
            if isNew { accountList.update(configuration.id) { entry in entry.accounts.removeAll { $0.key == kept.key } } }
            throw error
        }
        var outcome = AuthSession.SignInOutcome(token: token, storeNotice: notice)
        outcome.account = kept
        outcome.isNewAccount = isNew
        if let meant, let meantSubject = meant.subject, let subject = kept.subject, subject != meantSubject {
            outcome.accountChange = AccountChange(before: meant.label, now: kept.label)
        } else if meant == nil, choice == .inUse, entry.accounts.isEmpty, let last = entry.lastSignedOut,
            let lastSubject = last.subject, let subject = kept.subject, subject != lastSubject
        {
            // Every account signed out of, and now someone else than the last: said, as for the account meant.
            outcome.accountChange = AccountChange(before: last.label, now: kept.label, keptApart: false)
        }
        // In use from now on, once its tokens are kept: the account signed in — unless it is someone else
        // than the one meant, who is not put in that one's place.
        if outcome.accountChange?.keptApart != true { use(account: kept.key) }
        return outcome
    }

    /// Lists the account `person` is — found again by subject, the one meant when who it is is not
    /// known yet, or a new one — and returns it, and whether it is new. Throws when who signed in
    /// could not be found out and the account meant is a known person's, who it might not be:
    /// nothing is kept then. (A resource's token may not read the profile at all: its first
    /// sign-in is kept as an account whose person is not known.)
    private func keep(_ person: Person, meant: Account?, in accountList: AccountList) throws -> (Account, Bool) {
        let digest = person.subject.map(Account.digest(ofSubject:))
        let id = configuration.id
        return try accountList.update(id) { entry -> (Account, Bool) in
            var account: Account
            var isNew = false
            if let digest, let same = entry.accounts.first(where: { $0.subject == digest }) {
                account = same
            } else if let meant, let listed = entry.account(key: meant.key), listed.subject == nil {
                // Who the account meant is, is not known yet (an earlier release's sign-in): the person chose it.
                account = listed
            } else if digest == nil, meant?.subject != nil {
                // The account meant is a known person's; these tokens may be someone else's.
                throw OAuthError.accountUnknown(reason: person.problem ?? "\(configuration.displayName) did not say who signed in")
            } else {
                // A first account, or another one added: nobody's tokens are under the key it gets.
                account = Account(key: AccountList.newKey(for: id, digest: digest, taken: Set(entry.accounts.map(\.key))))
                isNew = true
            }
            account.subject = digest ?? account.subject
            account.name = Account.shown(person.name) ?? account.name
            account.email = Account.shown(person.email) ?? account.email
            account.loginHint = Account.shown(person.loginHint) ?? account.loginHint
            account.pictureURL = person.pictureURL ?? account.pictureURL
            if let index = entry.accounts.firstIndex(where: { $0.key == account.key }) {
                entry.accounts[index] = account
            } else {
                entry.accounts.append(account)
            }
            return (account, isNew)
        }.result
    }

    /// Who `token` is for: its ID token's subject (checked by the token client), else the profile's
    /// id, asked with the token before it is kept anywhere. The profile also gives a name when the ID
    /// token says none. Returns the token as it is after that (renewed, if the profile asked for it).
    /// An e-mail address the provider says it has not checked is not used to name the account.
    private func identify(_ token: Token) async -> (Token, Person) {
        var person = Person()
        if let claims = token.idToken.flatMap(IDTokenClaims.claims(of:)), let subject = claims["sub"]?.string, !subject.isEmpty {
            person.subject = subject
            let unchecked = ProfileMapping.flag(["email_verified"], in: claims) == false
            person.email = unchecked ? nil : claims["email"]?.string
            person.name = claims["name"]?.string ?? claims["preferred_username"]?.string
            person.loginHint = person.email ?? claims["preferred_username"]?.string
        }
        let configuration = self.configuration
        guard accountList != nil, configuration.userinfoEndpoint != nil, person.subject == nil || person.name == nil else {
            return (token, person)
        }
        // A session of its own, in memory: nothing is kept before it is known whose the tokens are.
        let scratch = AuthSession(
            configuration: configuration, store: MemoryTokenStore(), tokenClient: tokenClient, logger: network.logger)
        do {
            try await scratch.signIn(with: token)
            let profile = try await profileClient.fetch(using: scratch)
            person.subject = person.subject ?? profile.subject
            person.name = person.name ?? profile.name
            person.email = person.email ?? (profile.emailVerified == false ? nil : profile.email)
            person.loginHint = person.loginHint ?? profile.loginHint
            person.pictureURL = profile.pictureURL
        } catch {
            network.logger.notice("The profile could not say who signed in", metadata: ["error": "\(error)"])
            if person.subject == nil { person.problem = "\(error)" }
        }
        return (await scratch.currentToken() ?? token, person)
    }

    /// What a profile says of account `key`'s person, kept in the list for showing it (never its subject
    /// over another's: a profile of someone else is not this account's).
    func noteProfile(_ profile: Profile, of key: String) {
        guard let accountList else { return }
        let digest = profile.subject.map(Account.digest(ofSubject:))
        accountList.update(configuration.id) { entry in
            guard let index = entry.accounts.firstIndex(where: { $0.key == key }) else { return }
            var account = entry.accounts[index]
            if account.subject == nil { account.subject = digest }
            guard digest == nil || account.subject == digest else { return }
            account.name = Account.shown(profile.name) ?? account.name
            account.email = (profile.emailVerified == false ? nil : Account.shown(profile.email)) ?? account.email
            account.loginHint = Account.shown(profile.loginHint) ?? account.loginHint
            account.pictureURL = profile.pictureURL ?? account.pictureURL
            entry.accounts[index] = account
        }
    }

    /// Takes account `key` off the list (after its sign-out); the first left is then in use. Who it
    /// was is kept (a digest and a name, no token) while no account is left: see `lastSignedOut`.
    func forgetAccount(_ key: String) {
        accountList?.update(configuration.id) { entry in
            guard let index = entry.accounts.firstIndex(where: { $0.key == key }) else { return }
            let gone = entry.accounts.remove(at: index)
            entry.lastSignedOut = Account(key: gone.key, subject: gone.subject, name: gone.name, email: gone.email)
        }
    }
}
