import AgentCore
import FoundationEssentials
import GtkKit
import LatchkeyCore
import OAuthCore

/// "Allowed programs": every program the person always allows, with the provider
/// and when it last got a token (never the token), each with Revoke. Revoked, a
/// program is asked again at its next request: the agent reads the list again
/// whenever it changes.
@MainActor
final class ProgramsDialog {
    private let dialog: Dialog
    private let grants: ProgramGrants
    private let rows = Box(vertical: true, spacing: 12)
    private let empty = Label(
        "No program is allowed yet. The first time a program asks Latchkey's agent for a token, you are asked.", wrap: true)
    private let problem = Label("", wrap: true, selectable: true)
    private let providerNames: [String: String]
    // Kept: a button's "clicked" handler lives as long as its wrapper.
    private let close = Button(label: "Close")
    private var revokeButtons: [Button] = []
    var onDismiss: @MainActor () -> Void = {}

    // Layout: a sentence, then a row per program.
    init(parent: Window, grants: ProgramGrants, providerNames: [String: String]) {
        self.grants = grants
        self.providerNames = providerNames
        dialog = Dialog(title: "Allowed programs", over: parent)
        dialog.setDefaultSize(width: 560, height: -1)
        dialog.setResizable(false)
        dialog.setIcon(name: LatchkeyApp.id)
        let intro = Label(
            "These programs get your tokens from Latchkey's agent without asking. Revoke one, and it is asked again next time.",
            wrap: true)
        intro.setMaximumWidth(characters: 64)
        empty.addStyleClass("dim-label")
        empty.setMaximumWidth(characters: 64)
        problem.addStyleClass("error")
        close.setAccessible(name: "Close")
        let content = Box(vertical: true, spacing: 16)
        content.setMargins(18)
        content.append(intro)
        content.append(rows)
        content.append(empty)
        content.append(problem)
        dialog.setContent(content)
        dialog.addButton(close)
        close.onClicked { [weak self] in self?.dismiss() }
        dialog.onDismiss { [weak self] in self?.dismiss() }
        fill()
        dialog.showAll()
        problem.isVisible = grants.problem != nil
        problem.text = grants.problem ?? ""
        empty.isVisible = grants.all.isEmpty
        dialog.present()
    }

    private var kept: [Widget] = []

    /// What a grant is for, as the person knows it: the provider's name (its id where `providerNames`
    /// has none), and the account's as the list names it; a grant made for someone who signed out
    /// since (another person has the key now) says so.
    nonisolated static func name(of grant: ProgramGrant, providerNames: [String: String]) -> String {
        let id = AccountList.provider(ofKey: grant.provider)
        let provider = providerNames[id] ?? grant.provider
        let account = LatchkeyFiles.accounts.entry(for: id).account(key: grant.provider)
        guard let account, let person = grant.person, account.subject == person else {
            return "\(provider) (an account signed out since)"
        }
        return "\(provider) (\(account.label))"
    }

    private func fill() {
        for row in kept { row.destroy() }
        kept = []
        revokeButtons = []
        let now = Date()
        for grant in grants.all {
            let name = Label("", wrap: true, selectable: true)
            name.setMarkup("<b>\(Label.escape(Redaction.printable(grant.program.name)))</b>")
            name.setAlignment(horizontal: .start)
            let provider = Self.name(of: grant, providerNames: providerNames)
            let detail = Label(Self.detail(grant, provider: provider, now: now), wrap: true)
            detail.addStyleClass("dim-label")
            detail.setAlignment(horizontal: .start)
            let text = Box(vertical: true, spacing: 2)
            text.append(name)
            text.append(detail)
            let revoke = Button(label: "Revoke")
            revoke.setAccessible(name: "Revoke", description: "Revoke \(grant.program.name) for \(provider)")
            revoke.setAlignment(vertical: .center)
            revoke.onClicked { [weak self] in self?.revoke(grant) }
            revokeButtons.append(revoke)
            let row = Box(vertical: false, spacing: 12)
            row.setAccessible(name: "\(grant.program.name), \(provider)")
            row.append(text, expand: true)
            row.append(revoke)
            rows.append(row)
            kept.append(row)
        }
        rows.showAll()
        empty.isVisible = kept.isEmpty
    }

    /// "GitHub · last got a token 3 minutes ago" (or "not yet"), and what it was allowed when that is
    /// less than the whole sign-in: "GitLab · read_user · for https://… · last got a token just now".
    nonisolated static func detail(_ grant: ProgramGrant, provider: String, now: Date) -> String {
        let last = grant.lastUsed.map { "last got a token \(ago(now.timeIntervalSince1970 - $0))" } ?? "has not got a token yet"
        let allowed = grant.narrowing
        let what =
            (allowed.scopes.isEmpty ? [] : [Redaction.printable(allowed.scopes.joined(separator: " "))])
            + (allowed.resource.map { ["for \(Redaction.printable($0.absoluteString))"] } ?? [])
        return ([provider] + what + [last]).joined(separator: " · ")
    }

    nonisolated static func ago(_ seconds: Double) -> String {
        switch seconds {
        case ..<60: "just now"
        case ..<3600: "\(Int(seconds / 60)) minute\(Int(seconds / 60) == 1 ? "" : "s") ago"
        case ..<86400: "\(Int(seconds / 3600)) hour\(Int(seconds / 3600) == 1 ? "" : "s") ago"
        default: "\(Int(seconds / 86400)) day\(Int(seconds / 86400) == 1 ? "" : "s") ago"
        }
    }

    private func revoke(_ grant: ProgramGrant) {
        do {
            try grants.forget(grant.program, provider: grant.provider)
            problem.isVisible = false
        } catch {
            problem.text = "\(error)"
            problem.isVisible = true
        }
        fill()
    }

    private func dismiss() {
        dialog.destroy()
        onDismiss()
    }
}
