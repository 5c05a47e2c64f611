import Foundation
import LatchkeyServices
import Testing

/// Issue 40 §3: when nobody may be asked — `--no-interaction`, `CI`, git's `credential.interactive`.
@Suite struct InteractionTests {
    @Test(arguments: [
        ("true", false), ("1", false), ("yes", false), ("TRUE", false), ("", true), ("false", true), ("0", true), ("no", true),
        ("off", true),
    ])
    func ciSetToAnythingButNoMeansNobody(_ value: String, _ mayAsk: Bool) {
        #expect(Interaction.decide(noInteraction: false, environment: ["CI": value]).mayAsk == mayAsk)
    }

    @Test func theFlagAndGitSayNobodyAndSayWhy() {
        let flag = Interaction.decide(noInteraction: true, environment: [:])
        #expect(flag.nobodyBecause == "--no-interaction says nobody may be asked")
        let git = Interaction.decide(noInteraction: false, environment: [:], gitSaysNo: true)
        #expect(git.nobodyBecause?.contains("credential.interactive") == true)
        #expect(Interaction.decide(noInteraction: false, environment: ["PATH": "/usr/bin"]).mayAsk)
    }

    /// A graphical session is named by DISPLAY or WAYLAND_DISPLAY, either one, and not by an empty one.
    @Test func aDisplayIsNamedByEitherVariableNotEmpty() {
        #expect(Interaction.namesDisplay(["DISPLAY": ":1"]))
        #expect(Interaction.namesDisplay(["WAYLAND_DISPLAY": "wayland-0"]))
        #expect(!Interaction.namesDisplay(["DISPLAY": "", "WAYLAND_DISPLAY": ""]))
        #expect(!Interaction.namesDisplay([:]))
        #expect(Interaction.personAtHand(environment: ["DISPLAY": ":1"]).display)
        #expect(!Interaction.personAtHand(environment: ["DISPLAY": ""]).display)
    }

    /// Read with the real git, as git passes `-c` to its helpers (GIT_CONFIG_PARAMETERS) and from a config file.
    @Test func gitsCredentialInteractiveIsReadAsGitHasIt() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("interaction-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let base = ["HOME": home.path, "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"]
        #expect(!Interaction.gitCredentialInteractiveIsFalse(environment: base), "unset")
        for (value, nobody) in [("false", true), ("never", true), ("true", false), ("auto", false)] {
            let passed = base.merging(["GIT_CONFIG_PARAMETERS": "'credential.interactive=\(value)'"]) { $1 }
            #expect(Interaction.gitCredentialInteractiveIsFalse(environment: passed) == nobody, "git -c credential.interactive=\(value)")
        }
        try "[credential]\n\tinteractive = false\n".write(to: home.appendingPathComponent(".gitconfig"), atomically: true, encoding: .utf8)
        #expect(Interaction.gitCredentialInteractiveIsFalse(environment: base), "in ~/.gitconfig")
        // More than a pipe holds: git is not left blocked on it (and the helper with it), nor is it taken for false.
        let long = String(repeating: "x", count: 200_000)
        try "[credential]\n\tinteractive = \(long)\n".write(
            to: home.appendingPathComponent(".gitconfig"), atomically: true, encoding: .utf8)
        #expect(!Interaction.gitCredentialInteractiveIsFalse(environment: base), "a value longer than a pipe holds")
    }
}
