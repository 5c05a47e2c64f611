import GtkKit
import LatchkeyCore
import OAuthCore

/// Adds a provider of the person's own, asking one thing at a time: first what is added (an
/// OpenID Connect issuer, a service to reach, a provider file), then that one thing. The
/// field, its label and the sentence above it follow the choice.
@MainActor
final class AddProviderDialog: FormDialog {
    /// The one field: an issuer URL, a resource URL or a file's path, as chosen.
    let field = Entry(placeholder: "")
    private let byIssuer = RadioButton(label: "A provider, by its issuer URL")
    private let byResource: RadioButton
    private let byFile: RadioButton
    private let fieldLabel = Label("")
    private let explanation = Label("", wrap: true)
    private let choose = Button(label: "Choose…")
    /// Enterprise-Managed Authorization: the provider added is the organisation's identity provider.
    let organisations = CheckButton(label: "My organisation's identity provider: sign in once there for its MCP servers")
    private var chooser: FileChooser?
    private(set) var kind = SetUpForm.SourceKind.issuer
    /// What was typed for each kind: choosing another kind and back keeps it.
    private var typed: [SetUpForm.SourceKind: String] = [:]

    init(parent: Window) {
        byResource = RadioButton(label: "A service you want to reach (an API, an MCP server), by its URL", joining: byIssuer)
        byFile = RadioButton(label: "A provider file", joining: byIssuer)
        super.init(parent: parent, title: "Add a provider", intro: "What do you want to add?", actionLabel: "Add")
        let choices = Box(vertical: true, spacing: 6)
        for radio in [byIssuer, byResource, byFile] {
            choices.append(radio)
            radio.onToggled { [weak self] in self?.chosen() }
        }
        choices.setAccessible(name: "What to add")
        addRow(Label(""), choices)
        explanation.addStyleClass("dim-label")
        explanation.setMaximumWidth(characters: 60)
        explanation.setAlignment(horizontal: .start)
        addRow(Label(""), explanation)
        choose.isLeftOutOfShowAll = true
        choose.setAccessible(name: "Choose…", description: "Choose a provider file")
        choose.onClicked { [weak self] in self?.chooseFile() }
        addRow(fieldLabel, field, extra: choose)
        addRow(Label(""), organisations)
        field.activatesDefault()
        show(.issuer)
    }

    func source() -> SetUpForm.Source? {
        checked(SetUpForm.source(kind, field.text))
    }

    private func chosen() {
        let now: SetUpForm.SourceKind = byFile.isActive ? .file : byResource.isActive ? .resource : .issuer
        guard now != kind else { return }
        typed[kind] = field.text
        show(now)
        show(problem: nil)
        field.grabFocus()
    }

    private func show(_ chosen: SetUpForm.SourceKind) {
        kind = chosen
        let (label, placeholder, sentence): (String, String, String) =
            switch chosen {
            case .issuer:
                (
                    "Issuer URL", "https://accounts.example.com",
                    "Latchkey reads the provider's endpoints from its discovery document, and registers itself where the provider allows."
                )
            case .resource:
                (
                    "Resource URL", "https://api.example.com/mcp",
                    "Latchkey asks the service who signs you in there, and registers itself where that provider allows."
                )
            case .file:
                ("Provider file", "A provider file (JSON)", "A file written like Latchkey's presets; it is checked before it is kept.")
            }
        fieldLabel.text = label
        field.setAccessible(name: label)
        field.placeholder = placeholder
        field.text = typed[chosen] ?? ""
        explanation.text = sentence
        choose.isVisible = chosen == .file
        // A service to reach is not where people sign in for the others.
        organisations.isVisible = chosen != .resource
        if chosen == .resource { organisations.isActive = false }
    }

    private func chooseFile() {
        let chooser = FileChooser(title: "Choose a provider file", over: dialog, patternName: "Provider files (JSON)", pattern: "*.json")
        self.chooser = chooser
        chooser.run { [weak self] path in
            if let path { self?.field.text = path }
            self?.chooser = nil
        }
    }
}
