import AgentCore
import Foundation
import OAuthCore
import Testing

/// The question as the dialog's process gets it: every word decided by the agent, one line of JSON
/// that nothing a caller chose can break, and only an answer the dialog offered counts.
@Suite struct ConsentPromptTests {
    let file = ExecutableFile(device: 1, inode: 42, size: 4096, modified: 1_700_000_000)

    func question(_ program: Program, commandLine: [String], scopes: [String] = []) -> ConsentQuestion {
        ConsentQuestion(
            caller: Caller(pid: 1, uid: getuid(), program: program, file: file, commandLine: commandLine), providerID: "mine",
            providerName: "My sandbox", scopes: scopes, applicationHint: nil, changed: false)
    }

    @Test func aPromptSaysWhoAsksForWhatAndWhatAllowingGivesAway() {
        let prompt = ConsentPrompt(question(Program(path: "/usr/bin/oidc-token"), commandLine: ["oidc-token", "mine"], scopes: ["openid"]))
        #expect(prompt.program == "/usr/bin/oidc-token")
        #expect(prompt.provider == "My sandbox")
        #expect(prompt.particulars.map(\.name) == ["Program", "Command line", "Provider", "Wants"])
        #expect(prompt.particulars.first { $0.name == "Command line" }?.value == "oidc-token mine")
        #expect(prompt.particulars.last?.value == "openid (its token carries no more)")
        #expect(prompt.note.hasPrefix("Any program that runs /usr/bin/oidc-token gets the token through it too."))
        #expect(prompt.offersAlways && !prompt.offersWhileConnected)
    }

    /// What a program wants, in the provider file's words; what it was allowed before, when it wants
    /// more; and, where the provider cannot narrow a token, that it gets the whole one.
    @Test func aPromptSaysWhatTheProgramWantsInWords() {
        var asked = question(Program(path: "/usr/bin/git"), commandLine: ["git", "push"], scopes: ["read_user", "write_repository"])
        asked.scopeWords = ["write_repository": "read and write your repositories"]
        asked.resource = URL(string: "https://api.example/v4")
        asked.allowedBefore = Narrowing(scopes: ["read_user"])
        let prompt = ConsentPrompt(asked)
        let lines = Dictionary(uniqueKeysWithValues: prompt.particulars.map { ($0.name, $0.value) })
        #expect(lines["Wants"] == "read_user, read and write your repositories (write_repository) (its token carries no more)")
        #expect(lines["For"] == "https://api.example/v4 alone")
        #expect(lines["Allowed before"] == "read_user")
        asked.narrows = false
        asked.resource = nil
        let whole = ConsentPrompt(asked).particulars.first { $0.name == "Wants" }?.value
        #expect(
            whole?.hasSuffix(
                "My sandbox cannot give a narrower token: the program gets your whole token, and can do all your sign-in allows") == true)
    }

    /// A sandboxed app is named as the apps menu names it (its desktop entry, which Flatpak exported),
    /// and always by its app id beside: the entry's name is the publisher's to choose.
    @Test func aFlatpakAppIsNamedByItsDesktopEntryBesideItsID() throws {
        let exports = FileManager.default.temporaryDirectory.appendingPathComponent("exports-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: exports) }
        try FileManager.default.createDirectory(at: exports, withIntermediateDirectories: true)
        try Data("[Desktop Entry]\nName[de]=Notizen\nName=Notes\nExec=notes\n[Desktop Action new]\nName=New note\n".utf8).write(
            to: exports.appendingPathComponent("org.example.Notes.desktop"))
        try Data("[Desktop Entry]\nName=Fire\u{1b}[2Jfox\n".utf8).write(to: exports.appendingPathComponent("org.example.Sly.desktop"))
        let notes = question(Program(path: "/app/bin/notes", flatpakID: "org.example.Notes"), commandLine: ["notes"])
        #expect(ConsentPrompt(notes, exports: [exports.path]).program == "\u{201C}Notes\u{201D} (org.example.Notes)")
        let sly = question(Program(path: "/app/bin/sly", flatpakID: "org.example.Sly"), commandLine: ["sly"])
        #expect(ConsentPrompt(sly, exports: [exports.path]).program.hasSuffix("fox\u{201D} (org.example.Sly)"))
        #expect(!ConsentPrompt(sly, exports: [exports.path]).program.contains("\u{1b}"), "nothing a publisher wrote moves the dialog")
        let none = question(Program(path: "/app/bin/x", flatpakID: "org.example.None"), commandLine: ["x"])
        #expect(ConsentPrompt(none, exports: [exports.path]).program == "org.example.None", "no entry: the app id alone")
        #expect(FlatpakApps.desktopName(of: "../../etc/passwd", in: [exports.path]) == nil)
        // A FIFO, or a link to a device that never ends, is not read.
        #expect(mkfifo(exports.appendingPathComponent("org.example.Fifo.desktop").path, 0o600) == 0)
        #expect(FlatpakApps.desktopName(of: "org.example.Fifo", in: [exports.path]) == nil)
        try FileManager.default.createSymbolicLink(
            atPath: exports.appendingPathComponent("org.example.Zero.desktop").path, withDestinationPath: "/dev/zero")
        #expect(FlatpakApps.desktopName(of: "org.example.Zero", in: [exports.path]) == nil)
    }

    @Test func aShellIsNeverOfferedAlways() {
        let prompt = ConsentPrompt(question(Program(path: "/usr/bin/bash"), commandLine: ["bash"]))
        #expect(!prompt.offersAlways && !prompt.offersWhileConnected)
        #expect(prompt.note.contains("runs other programs for anyone"))
        #expect(prompt.particulars.last?.value == "whatever your sign-in allows")
    }

    @Test func throughSSHOnlyAllowWhileConnectedIsOffered() {
        let prompt = ConsentPrompt(question(Program(path: "/usr/bin/ssh", remoteHost: "build.example"), commandLine: ["ssh", "-R", "x"]))
        #expect(!prompt.offersAlways && prompt.offersWhileConnected)
        #expect(prompt.particulars.first == ConsentPrompt.Particular("Remote host", "build.example"))
    }

    /// A command line with line breaks, quotes, a right-to-left override and a terminal escape: one
    /// line on the wire, read back the same, nothing in it obeyed.
    @Test func aHostileCommandLineTravelsAsOneLineAndReadsBackTheSame() throws {
        let hostile = ["evil", "\"}\n{\"program\":\"git\"", "\u{202E}txt.exe", "\u{1B}[2J", String(repeating: "x", count: 65_536)]
        let prompt = ConsentPrompt(question(Program(path: "/tmp/evil"), commandLine: hostile))
        let line = prompt.line
        #expect(!line.contains("\n"))
        let back = try #require(ConsentPrompt(line: Array(line.utf8)))
        #expect(back == prompt)
        let shown = try #require(back.particulars.first { $0.name == "Command line" }?.value)
        #expect(!shown.contains("\u{202E}") && !shown.contains("\u{1B}") && !shown.contains("\n"))
    }

    @Test(arguments: ["", "{}", "[]", "{\"program\":\"x\"}", "not json", "{\"program\":1,\"provider\":\"p\"}"])
    func anythingButAWholePromptIsRefused(_ text: String) {
        #expect(ConsentPrompt(line: Array(text.utf8)) == nil)
    }

    @Test func aParticularThatIsNotAPairIsRefused() throws {
        let prompt = ConsentPrompt(question(Program(path: "/usr/bin/git"), commandLine: ["git"]))
        let broken = prompt.line.replacingOccurrences(of: "[\"Program\",", with: "[\"Program\",\"extra\",")
        #expect(broken != prompt.line)
        #expect(ConsentPrompt(line: Array(broken.utf8)) == nil)
    }

    @Test func answersTravelAsWordsAndNothingElseIsOne() {
        for answer in [ConsentAnswer.allowOnce, .alwaysAllow, .allowWhileConnected, .deny] {
            #expect(ConsentAnswer(word: answer.word) == answer)
        }
        #expect(ConsentAnswer(word: "yes") == nil)
        #expect(ConsentAnswer(word: "always ") == nil)
    }

    @Test func aDisplayIsReachableOnlyWhereItsSocketTakesAConnection() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("display-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(!AgentHelper.displayIsReachable(environment: [:]))
        #expect(!AgentHelper.displayIsReachable(environment: ["WAYLAND_DISPLAY": "wayland-9", "XDG_RUNTIME_DIR": directory.path]))
        // A listening socket where Wayland's would be: reachable.
        let path = directory.appendingPathComponent("wayland-9").path
        let fd = boundSocket(at: path)
        defer { close(fd) }
        #expect(fd >= 0 && listen(fd, 1) == 0)
        #expect(AgentHelper.displayIsReachable(environment: ["WAYLAND_DISPLAY": "wayland-9", "XDG_RUNTIME_DIR": directory.path]))
        #expect(AgentHelper.displayIsReachable(environment: ["WAYLAND_DISPLAY": path]))
        // An X display number nobody serves (X servers listen at /tmp/.X11-unix/X<n>).
        #expect(!AgentHelper.displayIsReachable(environment: ["DISPLAY": ":64999"]))
        #expect(!AgentHelper.displayIsReachable(environment: ["DISPLAY": ":"]))
    }
}
