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
    private let header: HeaderBar
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
        // Titled by a header bar of its own, as the main window is: with or without a window manager.
        header = HeaderBar(title: title)
        dialog.setTitlebar(header)
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
        field.setAccessible(name: text)
        addRow(Label(text), field, extra: extra)
    }

    /// A row whose label the dialog changes as it goes (and the field's accessible name with it).
    func addRow(_ label: Label, _ field: Widget, extra: Widget? = nil) {
        label.addStyleClass("dim-label")
        label.setAlignment(horizontal: .end)
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
