import GtkKit
import LatchkeyCore
import OAuthCore

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
