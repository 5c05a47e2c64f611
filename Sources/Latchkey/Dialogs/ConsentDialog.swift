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
    init(_ question: ConsentPrompt, answer: @escaping (ConsentAnswer) -> Void) {
        answered = answer
        window.markAsDialog()
        window.setIcon(name: LatchkeyApp.id)
        window.setDefaultSize(width: 520, height: -1)
        window.center()
        window.keepAbove()
        window.setResizable(false)

        let name = Self.clipped(question.program)
        let provider = Self.clipped(question.provider)
        let headline = Label("", wrap: true)
        headline.setMarkup("<b>\(Label.escape(name))</b> asks for a token of your <b>\(Label.escape(provider))</b> sign-in.")
        headline.setMaximumWidth(characters: 60)
        headline.setAccessible(name: "\(name) asks for a token of your \(provider) sign-in.")
        // What allowing it means: what runs it gets the token too, and what runs others is asked each time.
        let note = Label(question.note, wrap: true)
        note.addStyleClass("dim-label")
        note.setMaximumWidth(characters: 60)

        let grid = Grid(rowSpacing: 6, columnSpacing: 12)
        var row: Int32 = 0
        for (name, value) in question.particulars.map({ ($0.name, $0.value) }) {
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
