import GtkKit
import LatchkeyCore
import OAuthCore

/// The frame both dialogs share: a sentence on top, a form of labelled rows, a
/// line for the problem (inline, beside the fields, never a second dialog),
/// and Cancel plus one action at the bottom. The form is checked when the
/// action is pressed; while what it asked for runs (the keyring, the network)
/// the action waits, and an error comes back to the problem line.
@MainActor
class FormDialog {
    let dialog: Dialog
    let action: Button
    private let cancel = Button(label: "Cancel")
    private let grid = Grid(rowSpacing: 10, columnSpacing: 12)
    private let problem = Label("", wrap: true, selectable: true)
    private let spinner = Spinner()
    private var rows: Int32 = 0
    /// Set while the action's work runs: a second press, or Cancel, waits for it.
    private(set) var isBusy = false
    var onDismiss: @MainActor () -> Void = {}

    init(parent: Window, title: String, intro: String, actionLabel: String) {
        dialog = Dialog(title: title, over: parent)
        dialog.setDefaultSize(width: 520, height: -1)
        dialog.setIcon(name: LatchkeyApp.id)
        action = Button(label: actionLabel)

        let introLabel = Label(intro, wrap: true, selectable: true)
        introLabel.setMaximumWidth(characters: 60)
        problem.addStyleClass("error")
        problem.setMaximumWidth(characters: 60)

        let statusRow = Box(vertical: false, spacing: 8)
        statusRow.append(spinner)
        statusRow.append(problem, expand: true)

        let content = Box(vertical: true, spacing: 16)
        content.setMargins(18)
        content.append(introLabel)
        content.append(grid)
        content.append(statusRow)
        dialog.setContent(content)

        cancel.setAccessible(name: "Cancel")
        action.setAccessible(name: actionLabel)
        action.addStyleClass("suggested-action")
        dialog.addButton(cancel)
        dialog.addButton(action)
        dialog.setDefault(action)
        cancel.onClicked { [weak self] in self?.dismiss() }
        dialog.onDismiss { [weak self] in self?.dismiss() }
    }

    /// A labelled row; `extra` sits after the field (a Copy button).
    func addRow(_ text: String, _ field: Widget, extra: Widget? = nil) {
        let label = Label(text)
        label.addStyleClass("dim-label")
        label.setAlignment(horizontal: .end)
        field.setAccessible(name: text)
        grid.attach(label, column: 0, row: rows)
        grid.attach(field, column: 1, row: rows, width: extra == nil ? 2 : 1)
        if let extra { grid.attach(extra, column: 2, row: rows) }
        rows += 1
    }

    /// Shows the dialog with the keyboard in `focus` (the first field to fill).
    func present(focus: Widget) {
        dialog.showAll()
        spinner.isVisible = false
        problem.isVisible = false
        dialog.present()
        focus.grabFocus()
    }

    /// The form's value when it is right; otherwise nil, with its mistake shown.
    func checked<Value>(_ result: Result<Value, SetUpForm.Problem>) -> Value? {
        switch result {
        case .success(let value):
            show(problem: nil)
            return value
        case .failure(let problem):
            show(problem: problem.sentence)
            return nil
        }
    }

    /// The mistake or failure, beside the fields; nil clears it.
    func show(problem sentence: String?) {
        problem.text = sentence ?? ""
        problem.setAccessible(name: sentence ?? "", description: "Problem")
        problem.isVisible = sentence != nil
    }

    /// While the action's work runs: the action and Cancel wait, a spinner turns.
    func setBusy(_ busy: Bool) {
        isBusy = busy
        action.isSensitive = !busy
        cancel.isSensitive = !busy
        spinner.isVisible = busy
        spinner.setSpinning(busy)
        if busy { show(problem: nil) }
    }

    func close() {
        dialog.destroy()
    }

    private func dismiss() {
        guard !isBusy else { return }
        close()
        onDismiss()
    }
}

/// Sets up a provider that lacks its credentials: what to register and where,
/// the exact redirect URI with a Copy button, the client id, and the secret.
@MainActor
final class SetUpDialog: FormDialog {
    let clientID: Entry
    let secret: Entry
    private let copy = Button(label: "Copy")
    private let need: SetUpForm.SecretNeed
    private let providerName: String

    init(parent: Window, draft: ProviderConfiguration, need: SetUpForm.SecretNeed) {
        self.need = need
        providerName = draft.displayName
        let redirect = draft.redirectURI.absoluteString
        let intro = (draft.registrationHint ?? "Register Latchkey as an app with \(draft.displayName).")
            + " Then copy its client id"
            + (need == .none ? "" : need == .optional ? " (and its secret, if it has one)" : " and secret") + " here."
        clientID = Entry(text: draft.clientID, placeholder: "From \(draft.displayName)’s app registration")
        let secretPlaceholder =
            switch need {
            case .none: "Not used: \(draft.displayName) takes none from a desktop app"
            case .required(stored: true): "Kept already; type a new one to replace it"
            case .required(stored: false): "Required by \(draft.displayName)"
            case .optional: "Only if your registration has one"
            }
        secret = Entry(placeholder: secretPlaceholder, hidden: true)
        super.init(parent: parent, title: "Set up \(draft.displayName)", intro: intro, actionLabel: "Save")

        let uri = Entry(text: redirect)
        uri.isEditable = false
        copy.setTooltip("Copy the redirect URI, to paste into \(draft.displayName)’s registration")
        copy.onClicked { [weak self] in
            Clipboard.copy(redirect)
            self?.copy.label = "Copied"
        }
        addRow("Redirect URI", uri, extra: copy)
        copy.setAccessible(name: "Copy", description: "Copy the redirect URI")
        addRow("Client ID", clientID)
        addRow("Client secret", secret)
        clientID.activatesDefault()
        secret.activatesDefault()
    }

    /// The form, checked; its mistake is shown and nil returned.
    func answer() -> SetUpForm.Answer? {
        checked(SetUpForm.check(clientID: clientID.text, secret: secret.text, need: need, providerName: providerName))
    }
}

/// Adds a provider of the person's own: from an OpenID Connect issuer's
/// discovery document, or from a provider file of the presets' shape.
@MainActor
final class AddProviderDialog: FormDialog {
    let issuer = Entry(placeholder: "https://accounts.example.com")
    let resource = Entry(placeholder: "https://api.example.com/mcp")
    let file = Entry(placeholder: "A provider file (JSON)")
    private let choose = Button(label: "Choose…")
    private var chooser: FileChooser?

    init(parent: Window) {
        super.init(
            parent: parent, title: "Add a provider",
            intro: "Give the issuer URL of an OpenID Connect provider, and Latchkey reads its endpoints from the provider. "
                + "Or give the URL of what you want to reach, and Latchkey finds who signs you in there. "
                + "Either way Latchkey registers itself where the provider allows. "
                + "Or choose a provider file, written like Latchkey's presets.",
            actionLabel: "Add")
        choose.setAccessible(name: "Choose…", description: "Choose a provider file")
        choose.onClicked { [weak self] in self?.chooseFile() }
        addRow("Issuer URL", issuer)
        addRow("Resource URL", resource)
        addRow("Provider file", file, extra: choose)
        issuer.activatesDefault()
        resource.activatesDefault()
        file.activatesDefault()
    }

    func source() -> SetUpForm.Source? {
        checked(SetUpForm.source(issuer: issuer.text, resource: resource.text, file: file.text))
    }

    private func chooseFile() {
        let chooser = FileChooser(title: "Choose a provider file", over: dialog, patternName: "Provider files (JSON)", pattern: "*.json")
        self.chooser = chooser
        chooser.run { [weak self] path in
            if let path { self?.file.text = path }
            self?.chooser = nil
        }
    }
}
