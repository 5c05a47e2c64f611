import GtkKit
import LatchkeyCore
import OAuthCore

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
        let intro =
            (draft.registrationHint ?? "Register Latchkey as an app with \(draft.displayName).")
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
