import Foundation
import OAuthCore
import TestSupport
import Testing

extension LiveSandbox {
    var accountList: AccountList { AccountList(directory: directory.appendingPathComponent("accounts")) }

    /// A provider keeping its accounts beside the tokens, as the app does.
    func provider() -> Provider {
        Provider(configuration: configuration, store: store, network: Network(timeout: 10, logger: log.logger), accounts: accountList)
    }
}

private func grace() -> FormPostingUserAgent { FormPostingUserAgent(username: "grace", password: "compiler") }

/// Issue 27: a provider holds any number of accounts, each a person's, each kept on its own.
@Suite struct AccountTests {
    @Test func twoAccountsLiveSideBySideAndSigningOutOfOneLeavesTheOther() async throws {
        let live = try await LiveSandbox()
        let provider = live.provider()
        let ada = try await provider.signIn(using: FormPostingUserAgent())
        #expect(ada.account?.key == "sandbox", "the first account is kept where a single sign-in always was")
        #expect(ada.isNewAccount && ada.accountChange == nil)
        let second = try await provider.signIn(using: grace(), for: .another)
        let graceKey = try #require(second.account?.key)
        #expect(second.isNewAccount && second.accountChange == nil && graceKey.hasPrefix("sandbox@"))

        let entry = await provider.accounts()
        #expect(entry.accounts.map(\.email) == ["ada@sandbox.example", "grace@sandbox.example"])
        #expect(entry.accounts.map(\.name) == ["Ada Lovelace", "Grace Hopper"])
        #expect(entry.current?.key == graceKey, "the account just added is the one in use")
        // Each account's tokens in their own place, and each profile its own person's.
        #expect(try live.store.load(for: "sandbox")?.accessToken == ada.token.accessToken)
        #expect(try live.store.load(for: graceKey)?.accessToken == second.token.accessToken)
        #expect(try await provider.profile().email == "grace@sandbox.example")
        #expect(try await provider.profile(account: "sandbox").email == "ada@sandbox.example")

        provider.use(account: "sandbox")
        #expect(try await provider.freshToken().accessToken == ada.token.accessToken)
        // As another process (a relaunch) finds them.
        let relaunched = live.provider()
        #expect(await relaunched.accounts().accounts.map(\.key) == ["sandbox", graceKey])
        #expect(relaunched.accountInUseKey == "sandbox")

        _ = await relaunched.signOut(account: graceKey)
        #expect(await provider.accounts().accounts.map(\.key) == ["sandbox"])
        #expect(try live.store.load(for: graceKey) == nil)
        #expect(try await provider.freshToken().accessToken == ada.token.accessToken, "Ada's sign-in is untouched")
        #expect(try await provider.profile().email == "ada@sandbox.example")
    }

    /// Issue 24 §1.3 kept: a sign-out ends a grant, not the question "is this still me?". Every
    /// account signed out of, the next sign-in as someone else than the last is said; as the same, not.
    @Test func aFirstSignInAfterSigningOutAsSomeoneElseIsSaid() async throws {
        let live = try await LiveSandbox()
        let provider = live.provider()
        _ = try await provider.signIn(using: FormPostingUserAgent())
        _ = await provider.signOut()
        let other = try await provider.signIn(using: grace())
        #expect("\(try #require(other.accountChange))" == "Signed in as grace@sandbox.example, no longer as ada@sandbox.example.")
        #expect(provider.accountInUseKey == other.account?.key)
        _ = await provider.signOut()
        #expect(try await provider.signIn(using: grace()).accountChange == nil, "the same person again")
    }

    /// Adding an account that is already there signs it in again: no second copy of the same person.
    @Test func addingTheSamePersonAgainRenewsTheirAccount() async throws {
        let live = try await LiveSandbox()
        let provider = live.provider()
        let first = try await provider.signIn(using: grace())
        let again = try await provider.signIn(using: grace(), for: .another)
        #expect(!again.isNewAccount && again.account?.key == first.account?.key)
        #expect(await provider.accounts().accounts.count == 1)
        #expect(try live.store.load(for: "sandbox")?.accessToken == again.token.accessToken)
    }

    /// A sign-in meant to renew Ada's that comes back as Grace's is kept as Grace's own account:
    /// Ada's tokens are not touched, and it is said.
    @Test func aSignInAsSomeoneElseIsKeptApartAndSaid() async throws {
        let live = try await LiveSandbox()
        let provider = live.provider()
        _ = try await provider.signIn(using: FormPostingUserAgent())
        let adaFile = try Data(contentsOf: live.directory.appendingPathComponent("sandbox.json"))
        let other = try await provider.signIn(using: grace(), for: .account("sandbox"))
        #expect(other.accountChange == AccountChange(before: "ada@sandbox.example", now: "grace@sandbox.example"))
        #expect(
            "\(other.accountChange!)"
                == "Signed in as grace@sandbox.example, not as ada@sandbox.example: kept as another account, and ada@sandbox.example is left as it was."
        )
        #expect(other.isNewAccount && other.account?.key != "sandbox")
        #expect(provider.accountInUseKey == "sandbox", "someone else is not put in the place of the account meant")
        #expect(try Data(contentsOf: live.directory.appendingPathComponent("sandbox.json")) == adaFile, "Ada's sign-in, byte for byte")
        // Kept without the opaque subject itself, and without any token.
        let kept = try String(contentsOf: live.directory.appendingPathComponent("accounts/sandbox.accounts.json"), encoding: .utf8)
        let subject = try #require(IDTokenClaimsProbe.subject(of: other.token.idToken))
        #expect(!kept.contains(subject) && !kept.contains(other.token.accessToken) && !kept.contains(other.token.refreshToken ?? "-"))
    }

    /// What the provider is asked: to let the person choose (without a hint, which would pass the
    /// chooser over) when adding one; the account's own login hint when signing it in again.
    @Test func addingAsksToChooseAndSigningInAgainNamesTheAccount() async throws {
        let live = try await LiveSandbox()
        let provider = live.provider()
        _ = try await provider.signIn(using: FormPostingUserAgent())
        _ = try await provider.signIn(using: grace(), for: .another)
        _ = try await provider.signIn(using: FormPostingUserAgent(), for: .account("sandbox"))
        let stats = try await HTTPClient().get("\(live.sandbox.baseURL)/_admin/stats").json
        #expect(stats["authorization_prompts"] as? [String] == ["", "select_account", ""])
        #expect(stats["authorization_login_hints"] as? [String] == ["", "", "ada@sandbox.example"])
    }

    /// Without ID tokens (GitHub), the profile says who signed in, asked before anything is kept.
    @Test func withoutAnIDTokenTheProfileTellsTheAccountsApart() async throws {
        let github = try await PresetOnSandbox("github", credentials: PresetOnSandbox.confidential)
        let provider = github.provider()
        let ada = try await provider.signIn(using: FormPostingUserAgent(), for: .another)
        let second = try await provider.signIn(using: grace(), for: .another)
        #expect(ada.isNewAccount && second.isNewAccount && ada.account?.key != second.account?.key)
        // As GitHub does, the sandbox keeps Grace's e-mail address private: she is called by her login.
        #expect(await provider.accounts().accounts.map(\.label) == ["ada@sandbox.example", "grace"])
        #expect(await provider.accounts().accounts.map(\.loginHint) == ["ada", "grace"], "GitHub's login, for its login parameter")
        let again = try await provider.signIn(using: FormPostingUserAgent(), for: .account(try #require(ada.account?.key)))
        #expect(again.account?.key == ada.account?.key && again.accountChange == nil)
    }
}

/// An attacker's review of the first version found these (issue 27).
@Suite struct AccountTrustTests {
    /// Who signed in cannot be found out (GitHub's profile failing) while signing in again an account
    /// whose person is known: nothing is kept, rather than someone's tokens under Ada's name.
    @Test func aSignInWhosePersonIsUnknownKeepsNothing() async throws {
        let github = try await PresetOnSandbox("github", credentials: PresetOnSandbox.confidential)
        let provider = github.provider()
        _ = try await provider.signIn(using: FormPostingUserAgent())
        let before = try github.store.load(for: "github")
        try await github.sandbox.setFault("userinfo", "500")
        do {
            _ = try await provider.signIn(using: grace())
            Issue.record("kept without knowing whose it was")
        } catch let error as OAuthError {
            guard case .accountUnknown = error else { return #expect(Bool(false), "\(error)") }
            #expect("\(error)".hasPrefix("It could not be found out whose sign-in this was (The provider's profile endpoint"), "\(error)")
            #expect("\(error)".hasSuffix("so nothing was kept: your accounts are as they were. Try again."))
        }
        #expect(try github.store.load(for: "github") == before)
        #expect(await provider.accounts().accounts.count == 1)
    }

    /// Who signed in cannot be found out, and there is no account it could be put over: kept, as the
    /// first account (a resource's token may not read the profile at all: found by the e2e
    /// mcp_situations_through_latchkey_token, whose /api/open token gets a 403 from the profile).
    @Test func aFirstSignInWhosePersonIsUnknownIsKept() async throws {
        let github = try await PresetOnSandbox("github", credentials: PresetOnSandbox.confidential)
        let provider = github.provider()
        try await github.sandbox.setFault("userinfo", "500")
        let first = try await provider.signIn(using: FormPostingUserAgent())
        #expect(first.account?.key == "github" && first.account?.subject == nil && first.isNewAccount)
        #expect(try await provider.freshToken().accessToken == first.token.accessToken)
    }

    /// A name two accounts share names neither: a script gets no token rather than perhaps the wrong one.
    @Test func aNameTwoAccountsShareIsRefused() async throws {
        let live = try await LiveSandbox()
        let provider = live.provider()
        _ = try await provider.signIn(using: FormPostingUserAgent())
        _ = try await provider.signIn(using: grace(), for: .another)
        live.accountList.update("sandbox") { entry in
            for index in entry.accounts.indices { entry.accounts[index].name = "Dr. Who" }
        }
        await #expect(throws: OAuthError.self) { _ = try await provider.session(forAccount: "dr. who") }
        #expect(try await provider.session(forAccount: "grace@sandbox.example").accountKey != "sandbox")
    }
}

/// A store an earlier release wrote — one sign-in per provider, under its id, and a note of who
/// it was — is read as the provider's first account, with nothing moved.
@Suite struct AccountMigrationTests {
    /// What an earlier release (before accounts) wrote beside its token: `accounts/<provider>.json`
    /// holding the last person's subject digest and name, as its `AccountRecords` encoded it.
    static func earlierNote(subject: String, name: String?, in directory: URL, provider: String = "sandbox") throws {
        struct Record: Codable {
            var subject: String
            var name: String?
        }
        let accounts = directory.appendingPathComponent("accounts")
        try FileManager.default.createDirectory(at: accounts, withIntermediateDirectories: true)
        try JSONEncoder().encode(Record(subject: Account.digest(ofSubject: subject), name: name))
            .write(to: accounts.appendingPathComponent("\(provider).json"))
    }

    @Test func anEarlierSignInBecomesTheFirstAccountIntact() async throws {
        let live = try await LiveSandbox()
        // The earlier release: one session per provider, no list.
        let token = try await live.signIn(live.session())
        let subject = try #require(IDTokenClaimsProbe.subject(of: token.idToken))
        try Self.earlierNote(subject: subject, name: "ada@sandbox.example", in: live.directory)
        let note = try Data(contentsOf: live.directory.appendingPathComponent("accounts/sandbox.json"))
        let tokenFile = try Data(contentsOf: live.directory.appendingPathComponent("sandbox.json"))

        let provider = live.provider()
        let entry = await provider.accounts()
        #expect(entry.accounts.map(\.key) == ["sandbox"])
        #expect(entry.accounts.first?.label == "ada@sandbox.example")
        #expect(entry.accounts.first?.subject == Account.digest(ofSubject: subject))
        #expect(try await provider.freshToken().accessToken == token.accessToken)
        #expect(try await provider.profile().email == "ada@sandbox.example")
        #expect(try Data(contentsOf: live.directory.appendingPathComponent("sandbox.json")) == tokenFile, "not moved, not rewritten")
        // Written as a list of its own once; the earlier note is left as it was (an earlier release still running uses it).
        let kept = try String(contentsOf: live.directory.appendingPathComponent("accounts/sandbox.accounts.json"), encoding: .utf8)
        #expect(kept.contains("\"accounts\""))
        #expect(try Data(contentsOf: live.directory.appendingPathComponent("accounts/sandbox.json")) == note)
        // Known by its subject, a second person is a second account, not a replacement.
        let second = try await provider.signIn(using: grace(), for: .inUse)
        #expect(second.isNewAccount && second.accountChange != nil)
        #expect(try live.store.load(for: "sandbox")?.accessToken == token.accessToken)
    }

    /// The earlier note outlived sign-outs: without a sign-in beside it, it is no account, but who was
    /// signed out of last: a first sign-in as someone else is said, as the earlier release said it.
    @Test func anEarlierNoteWithoutASignInIsWhoWasSignedOutOfLast() async throws {
        let live = try await LiveSandbox()
        try Self.earlierNote(subject: "someone", name: "someone@sandbox.example", in: live.directory)
        let provider = live.provider()
        #expect(await provider.accounts().accounts.isEmpty)
        let ada = try await provider.signIn(using: FormPostingUserAgent())
        #expect(ada.account?.key == "sandbox")
        #expect(ada.accountChange == AccountChange(before: "someone@sandbox.example", now: "ada@sandbox.example", keptApart: false))
        #expect("\(ada.accountChange!)" == "Signed in as ada@sandbox.example, no longer as someone@sandbox.example.")
        #expect(provider.accountInUseKey == "sandbox")
    }

    /// An earlier sign-in without an ID token and without a note (GitHub): an account whose person is
    /// learnt from the next profile.
    @Test func anEarlierSignInWithoutAnIDTokenIsLearntFromTheProfile() async throws {
        let github = try await PresetOnSandbox("github", credentials: PresetOnSandbox.confidential)
        _ = try await github.signIn(into: github.session())
        let provider = github.provider()
        #expect(await provider.accounts().accounts.map(\.subject) == [nil])
        _ = try await provider.profile()
        let learnt = await provider.accounts().accounts
        #expect(learnt.count == 1 && learnt.first?.subject != nil && learnt.first?.label == "ada@sandbox.example")
        let second = try await provider.signIn(using: grace(), for: .another)
        #expect(second.isNewAccount)
        #expect(await provider.accounts().accounts.count == 2)
    }
}

@Suite struct AccountListTests {
    /// Each change is made under a lock the processes share: many at once lose none.
    @Test func changesAtOnceLoseNone() async throws {
        let home = try TemporaryDirectory()
        let list = AccountList(directory: home.url)
        await withTaskGroup(of: Void.self) { group in
            for number in 0..<24 {
                group.addTask { @Sendable () async -> Void in
                    await BlockingWork.run { () -> Void in
                        list.update("sandbox") { entry in
                            entry.accounts.append(Account(key: "sandbox@\(String(number, radix: 16))0000", name: "person \(number)"))
                        }
                    }
                }
            }
        }
        #expect(list.entry(for: "sandbox").accounts.count == 24)
    }

    @Test func keysAndNames() {
        #expect(AccountList.isStorageKey("github") && AccountList.isStorageKey("github@0a1b2c3d4e5f"))
        for bad in ["", "github@", "github@xyz", "../github", "github@12/..", "git hub"] {
            #expect(!AccountList.isStorageKey(bad), "\(bad)")
        }
        #expect(AccountList.newKey(for: "github", digest: "0123456789abcdef0123", taken: []) == "github")
        #expect(AccountList.newKey(for: "github", digest: "0123456789abcdef0123", taken: ["github"]) == "github@0123456789ab")
        #expect(
            AccountList.newKey(for: "github", digest: "0123456789abcdef0123", taken: ["github", "github@0123456789ab"])
                == "github@0123456789abcdef")
        let account = Account(key: "github@0123456789ab", name: "Ada Lovelace", email: "Ada@Example.org", loginHint: "ada")
        #expect(account.matches("ada@example.org") && account.matches("ada lovelace") && account.matches("ada"))
        #expect(!account.matches("grace"))
    }
}
