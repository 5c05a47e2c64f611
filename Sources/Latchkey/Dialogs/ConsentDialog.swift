import AgentCore
import GtkKit
import LatchkeyCore
import OAuthCore

/// "Allow a program to use your sign-in?": which program (its executable, command
/// line, Flatpak id, and what it calls itself), which provider and scopes; Deny,
/// Allow once, Always allow. Closing it is Deny. A window of its own (the agent
/// has no other), above the others.
@MainActor
final class ConsentDialog {
    private let window = Window(title: "Allow a program to use your sign-in?")
    // Kept: a button's "clicked" handler lives as long as its wrapper.
    private let deny = Button(label: "Deny")
    private let once = Button(label: "Allow once")
    private let always = Button(label: "Always allow")
    private let whileConnected = Button(label: "Allow while connected")
    private var answered: ((ConsentAnswer) -> Void)?

    // Layout: the question, the program's particulars, the three answers.
    init(_ question: ConsentQuestion, answer: @escaping (ConsentAnswer) -> Void) {
        answered = answer
        window.markAsDialog()
        window.setIcon(name: LatchkeyApp.id)
        window.setDefaultSize(width: 520, height: -1)
        window.center()
        window.keepAbove()
        window.setResizable(false)

        let name = Self.clipped(ConsentSentence.capitalised(Redaction.printable(question.caller.program.name)))
        let provider = Self.clipped(Redaction.printable(question.providerName))
        let headline = Label("", wrap: true)
        headline.setMarkup("<b>\(Label.escape(name))</b> asks for a token of your <b>\(Label.escape(provider))</b> sign-in.")
        headline.setMaximumWidth(characters: 60)
        headline.setAccessible(name: "\(name) asks for a token of your \(provider) sign-in.")
        // What allowing it means: what runs it gets the token too, and what runs others is asked each time.
        let note = Label(Self.note(question), wrap: true)
        note.addStyleClass("dim-label")
        note.setMaximumWidth(characters: 60)

        let grid = Grid(rowSpacing: 6, columnSpacing: 12)
        var row: Int32 = 0
        for (name, value) in Self.particulars(question) {
            let label = Label(name)
            label.addStyleClass("dim-label")
            label.setAlignment(horizontal: .end, vertical: .start)
            // Not selectable: a selectable label takes the keyboard, which belongs to Deny. Clipped, so that
            // no field (a command line of 64 KiB) pushes the provider and the answers off the screen.
            let shown = Self.clipped(value)
            let text = Label(shown, wrap: true)
            text.setAlignment(horizontal: .start)
            text.setMaximumWidth(characters: 50)
            text.setAccessible(name: shown, description: name)
            grid.attach(label, column: 0, row: row)
            grid.attach(text, column: 1, row: row)
            row += 1
            if shown != value {
                // The whole of it, a click away: selectable, in a view of bounded height that scrolls.
                let whole = Expander("Whole \(name.lowercased()) (\(value.count) characters)")
                let scrolled = ScrolledWindow(maximumHeight: 160)
                let all = Label(value, wrap: true, selectable: true)
                all.setMaximumWidth(characters: 50)
                all.setAccessible(name: "Whole \(name.lowercased())", description: name)
                scrolled.setChild(all)
                whole.setChild(scrolled)
                grid.attach(whole, column: 1, row: row)
                row += 1
            }
        }
        for button in [deny, once, always, whileConnected] { button.setAccessible(name: button.label) }
        always.addStyleClass("suggested-action")
        whileConnected.addStyleClass("suggested-action")
        let buttons = Box(vertical: false, spacing: 8)
        buttons.setAlignment(horizontal: .end)
        let more = question.offersAlways ? [always] : question.offersWhileConnected ? [whileConnected] : []
        for button in [deny, once] + more { buttons.append(button) }

        let content = Box(vertical: true, spacing: 16)
        content.setMargins(18)
        content.append(headline)
        if question.changed {
            let changed = Label("Its program file changed since you allowed it: an update, or another program in its place.", wrap: true)
            changed.addStyleClass("error")
            changed.setMaximumWidth(characters: 60)
            content.append(changed)
        }
        content.append(grid)
        content.append(note)
        content.append(buttons)
        window.setChild(content)

        deny.onClicked { [weak self] in self?.finish(.deny) }
        once.onClicked { [weak self] in self?.finish(.allowOnce) }
        always.onClicked { [weak self] in self?.finish(.alwaysAllow) }
        whileConnected.onClicked { [weak self] in self?.finish(.allowWhileConnected) }
        window.onCloseRequest { [weak self] in
            self?.finish(.deny)
            return true
        }
        // A keystroke or click meant for another window must not answer the question: the answers take
        // none for a second after it appears, and again whenever it comes back to the front.
        window.on("map") { [weak self] in self?.holdAnswers() }
        window.onBool("focus-in-event") { [weak self] in
            self?.holdAnswers()
            return false
        }
        window.showAll()
        window.present()
        // The safe answer has the keyboard: Enter alone never hands out a token.
        deny.grabFocus()
    }

    /// Milliseconds the answers are held after the dialog appears or comes back to the front.
    static let holdMilliseconds: UInt32 = 1000
    private var holds = 0

    private func holdAnswers() {
        holds += 1
        let hold = holds
        for button in [deny, once, always, whileConnected] { button.isSensitive = false }
        MainLoop.after(milliseconds: Self.holdMilliseconds) { [weak self] in
            guard let self, self.holds == hold, self.answered != nil else { return }
            for button in [self.deny, self.once, self.always, self.whileConnected] { button.isSensitive = true }
            self.deny.grabFocus()
        }
    }

    /// Under the particulars: what an answer gives away.
    static func note(_ question: ConsentQuestion) -> String {
        let name = Redaction.printable(question.caller.program.name)
        if let host = question.caller.program.remoteHost {
            return "The agent's socket is forwarded to \(Redaction.printable(host)) (as ssh's command line names it) with ssh -R: "
                + "whatever runs there as you, through this connection, gets the token if you allow it. Allow while connected "
                + "covers what asks through this ssh until it ends, and is kept nowhere."
        }
        if let hidden = question.caller.program.hiddenName {
            return "It made itself unreadable to your other programs (oidc-token and ssh-agent do, against memory dumps), so "
                + "Latchkey cannot see which program file it runs, nor whether it runs in a sandbox: \u{201C}\(Redaction.printable(hidden))\u{201D} "
                + "and its command line are only what it says of itself. Latchkey asks each time."
        }
        if question.caller.connectionKeptAcrossExec {
            return "Its connection to Latchkey stays open across the programs it starts, so it may have been opened by another "
                + "program than \(name), which this process ran before: Latchkey asks each time."
        }
        if question.caller.program.flatpakID != nil {
            return "A Flatpak app cannot read your keyring itself: this answer is what lets it have the token or not."
        }
        if !question.offersAlways {
            return "\(name) runs other programs for anyone, so Latchkey asks each time rather than allow it always."
        }
        return "Any program that runs \(name) gets the token through it too. Programs of yours could also read your keyring "
            + "directly: this question is a record and a check, as ssh-add -c is."
    }

    /// What the person is told of the program, each line labelled.
    static func particulars(_ question: ConsentQuestion) -> [(String, String)] {
        let caller = question.caller
        var lines: [(String, String)] = []
        if let host = caller.program.remoteHost { lines.append(("Remote host", host)) }
        if let flatpak = caller.program.flatpakID { lines.append(("Flatpak app", flatpak)) }
        let runsFrom = caller.runsFrom.map { " (run as \($0), the same file)" } ?? ""
        lines.append(("Program", caller.program.hiddenName.map { "hidden (it calls itself \($0))" } ?? caller.program.path + runsFrom))
        lines.append(("Command line", caller.commandLine.joined(separator: " ")))
        if let parent = caller.startedBy { lines.append(("Started by", parent)) }
        if let through = caller.through { lines.append(("Asked through", through)) }
        if let hint = question.applicationHint { lines.append(("Calls itself", hint)) }
        lines.append(("Provider", question.providerName))
        lines.append(("Scopes", question.scopes.isEmpty ? "whatever your sign-in allows" : question.scopes.joined(separator: " ")))
        return lines.map { ($0.0, Redaction.printable($0.1)) }
    }

    /// Most characters of a field shown in place (about three lines of the dialog).
    static let longestField = 150

    /// `text` as shown in place: whole when short, else its beginning and an ellipsis.
    static func clipped(_ text: String) -> String {
        text.count <= longestField ? text : String(text.prefix(longestField - 1)) + "…"
    }

    /// Taken back: answered as Deny, and closed.
    func dismiss() { finish(.deny) }

    private func finish(_ answer: ConsentAnswer) {
        guard let answered else { return }
        self.answered = nil
        answered(answer)
        window.destroy()
    }
}

/// The agent's way of asking: a dialog per question on the desktop it was started in; none
/// without a display.
final class ConsentDialogs: ConsentAsker {
    private let environment: [String: String]

    init(environment: [String: String]) {
        self.environment = environment
    }

    func ask(_ question: ConsentQuestion) async -> ConsentAnswer? {
        let environment = self.environment
        let shown = Shown()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                MainLoop.perform {
                    guard Display.open(environment: environment) else { return continuation.resume(returning: nil) }
                    shown.show(question) { answer in continuation.resume(returning: answer) }
                }
            }
        } onCancel: {
            // Taken back (nobody answered in time): the dialog goes, and counts as Deny.
            MainLoop.perform { shown.withdraw() }
        }
    }

    var canAsk: Bool {
        get async {
            let environment = self.environment
            return await withCheckedContinuation { continuation in
                MainLoop.perform { continuation.resume(returning: Display.open(environment: environment)) }
            }
        }
    }

    /// The one dialog of one question, kept until it is answered or taken back (on GTK's thread).
    private final class Shown: @unchecked Sendable {
        private var dialog: ConsentDialog?
        private var withdrawn = false

        @MainActor func show(_ question: ConsentQuestion, answer: @escaping (ConsentAnswer) -> Void) {
            guard !withdrawn else { return answer(.deny) }
            dialog = ConsentDialog(question) { [weak self] given in
                answer(given)
                self?.dialog = nil
            }
        }

        @MainActor func withdraw() {
            withdrawn = true
            dialog?.dismiss()
        }
    }
}
