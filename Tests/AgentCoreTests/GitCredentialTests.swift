import AgentCore
import Foundation
import Testing

/// git's credential protocol, as git 2.39 (Debian 12) speaks it.
@Suite struct GitCredentialTests {
    let providers: [(id: String, gitHosts: [String])] = [("github", ["github.com"]), ("mine", ["127.0.0.1:8080"])]

    @Test func aRemoteOnADeclaredHostIsItsProviders() {
        let github = GitCredential(parsing: "protocol=https\nhost=github.com\npath=work-org/app.git\nwwwauth[]=Basic realm=\"GitHub\"\n\n")
        #expect(github.provider(among: providers) == "github")
        #expect(GitCredential(parsing: "protocol=https\nhost=GitHub.com\n").provider(among: providers) == "github")
        #expect(GitCredential(parsing: "protocol=https\nhost=gitlab.com\n").provider(among: providers) == nil)
    }

    @Test func aTokenNeverTravelsInClearTextOffThisComputer() {
        #expect(GitCredential(parsing: "protocol=http\nhost=github.com\n").provider(among: providers) == nil)
        #expect(GitCredential(parsing: "protocol=http\nhost=127.0.0.1:8080\n").provider(among: providers) == "mine")
        let lookalike: [(id: String, gitHosts: [String])] = [("x", ["localhost:8080", "127.evil.example"])]
        #expect(
            GitCredential(parsing: "protocol=http\nhost=localhost:8080\n").provider(among: lookalike) == nil, "a name, not this computer")
        #expect(GitCredential(parsing: "protocol=http\nhost=127.evil.example\n").provider(among: lookalike) == nil)
    }

    /// Issue 27: which account, by the remote's path or the repository's directory; the longest rule wins.
    @Test func anAccountIsChosenByTheRemoteOrTheDirectory() {
        let rules = [
            "github.com/work-org/": "ada@work.example", "github.com/work-org/secret": "ops", "~/src/personal": "ada-home",
            "/srv/repos/": "deploy",
        ]
        func account(_ text: String, in directory: String = "/tmp") -> String? {
            GitCredential(parsing: text).account(rules: rules, directory: directory, home: "/home/ada")
        }
        #expect(account("protocol=https\nhost=github.com\npath=work-org/app.git\n") == "ada@work.example")
        #expect(account("protocol=https\nhost=GitHub.com\npath=work-org/secret/x.git\n") == "ops")
        #expect(account("protocol=https\nhost=github.com\npath=work-organisation/app.git\n") == nil, "a path segment, not a prefix of one")
        #expect(account("protocol=https\nhost=github.com\npath=ada/dotfiles.git\n") == nil)
        #expect(account("protocol=https\nhost=github.com\npath=Work-Org/app.git\n") == "ada@work.example", "GitHub's paths in any case")
        for climbing in ["work-org/../ada/x.git", "work-org/%2E%2E/ada/x.git"] {
            #expect(account("protocol=https\nhost=github.com\npath=\(climbing)\n") == nil, "\(climbing)")
        }
        #expect(account("protocol=https\nhost=github.com\n", in: "/home/ada/src/personal/blog") == "ada-home", "git sent no path")
        #expect(account("protocol=https\nhost=github.com\n", in: "/home/ada/src/personalia") == nil)
        #expect(account("protocol=https\nhost=github.com\n", in: "/srv/repos") == "deploy")
        #expect(
            account("protocol=https\nhost=github.com\npath=work-org/app.git\n", in: "/home/ada/src/personal") == "ada@work.example",
            "the longer rule")
    }

    @Test func theAnswerIsAUserNameAndTheToken() {
        let token = AgentToken(
            accessToken: "t0k", tokenType: "Bearer", expiresAt: Date(timeIntervalSince1970: 1_900_000_000), scopes: [], provider: "github",
            issuer: "")
        #expect(
            GitCredential.answer(username: "x-access-token", token: token)
                == "username=x-access-token\npassword=t0k\npassword_expiry_utc=1900000000\n")
    }

    @Test func aRefusedTokenIsRecognisedAndForgottenOnceRenewed() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("refused-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let refused = RefusedTokens(directory: directory)
        refused.refuse("old-token", provider: "github")
        #expect(refused.isRefused("old-token", provider: "github"))
        #expect(!refused.isRefused("old-token", provider: "gitlab") && !refused.isRefused("new-token", provider: "github"))
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path).map {
            try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)
        }.joined()
        #expect(!kept.contains("old-token"), "only a hash of the token is kept")
        refused.clear(provider: "github")
        #expect(!refused.isRefused("old-token", provider: "github"))
    }
}
