import GtkKit
import OAuthCore

/// The provider's accounts as rows, in the manner of GNOME Settings' Online Accounts: each with
/// its picture, name, and the provider with the e-mail address under it; the row chosen is the
/// account in use. Shown once a provider has more than one account (with one, the window above
/// it is that person's).
@MainActor
final class AccountRows {
    let list = ListBox()
    let frame: Box
    private var pictures: [String: Image] = [:]
    /// The accounts shown, and the one chosen: a choice the window made itself is not the person's.
    private(set) var shown: [Account] = []

    init() {
        frame = Box(vertical: true, spacing: 6)
        let heading = Label("Accounts")
        heading.addStyleClass("dim-label")
        heading.setAlignment(horizontal: .start)
        list.addStyleClass("frame")
        list.setAccessible(name: "Accounts")
        frame.append(heading)
        frame.append(list)
        heading.show()
        list.show()
    }

    /// Shows `accounts` of `providerName`, `inUse` chosen; hidden while there are fewer than two.
    /// Returns whether the rows were made anew (their pictures are then the generic one).
    @discardableResult
    func show(_ accounts: [Account], inUse: String?, providerName: String) -> Bool {
        frame.isVisible = accounts.count > 1
        // With one account, no rows (and no pictures fetched: nothing loads libcurl before it is needed).
        let accounts = accounts.count > 1 ? accounts : []
        let anew = accounts != shown
        if anew {
            shown = accounts
            list.removeAll()
            pictures = [:]
            for account in accounts { append(account, providerName: providerName) }
        }
        if list.selectedID != inUse { list.selectedID = inUse }
        return anew
    }

    private func append(_ account: Account, providerName: String) {
        let picture = Image(iconName: "avatar-default-symbolic", pixelSize: 32)
        let name = Label(account.name ?? account.label)
        name.setAlignment(horizontal: .start)
        let detail = Label([providerName, account.name == nil ? nil : account.email].compactMap { $0 }.joined(separator: " · "))
        detail.addStyleClass("dim-label")
        detail.setAlignment(horizontal: .start)
        let text = Box(vertical: true, spacing: 2)
        text.setAlignment(vertical: .center)
        text.append(name)
        text.append(detail)
        let row = Box(vertical: false, spacing: 12)
        row.setMargins(8)
        row.append(picture)
        row.append(text, expand: true)
        list.append(id: account.key, content: row, name: account.label, description: "\(providerName) account")
        pictures[account.key] = picture
    }

    /// An account's picture, once fetched.
    func showPicture(_ bytes: [UInt8], of key: String) {
        pictures[key]?.setPicture(bytes, size: 32)
    }

    var isSensitive: Bool {
        get { list.isSensitive }
        set { list.isSensitive = newValue }
    }
}
