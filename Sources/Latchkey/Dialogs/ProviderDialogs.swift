import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// The set-up and add-provider dialogs: they ask, `ProviderSetUp` keeps, and
/// the window is told which provider to show. One dialog at a time; while what
/// it asked for runs (the keyring, the network), it waits, and a failure comes
/// back to its problem line.
@MainActor
final class ProviderDialogs {
    /// What a dialog's work produced: the provider to show, what to say once it is ready,
    /// and whether it is new (the list is read again, and set-up follows if it lacks credentials).
    struct Done: Sendable {
        let id: String
        let notice: String?
        let added: Bool
    }

    private let parent: Window
    private let setUp: ProviderSetUp
    private let logger: Logger
    private var dialog: FormDialog?
    var onDone: @MainActor (Done) -> Void = { _ in }

    init(parent: Window, setUp: ProviderSetUp, logger: Logger) {
        self.parent = parent
        self.setUp = setUp
        self.logger = logger
    }

    var isOpen: Bool { dialog != nil }

    /// Set up… for `draft`, which lacks what it needs.
    func openSetUp(for draft: ProviderConfiguration) {
        guard dialog == nil else { return }
        let (setUp, logger) = (self.setUp, self.logger)
        let dialog = SetUpDialog(parent: parent, draft: draft, need: setUp.secretNeed(for: draft))
        present(dialog, focus: draft.clientID.isEmpty ? dialog.clientID : dialog.secret) { dialog in
            guard let answer = dialog.answer() else { return nil }
            return {
                let notice = try await setUp.save(answer, for: draft)
                logger.info("Provider \(draft.id) set up", metadata: ["secret": "\(answer.secret == nil ? "not given" : "kept")"])
                return Done(id: draft.id, notice: notice, added: false)
            }
        }
    }

    /// + : a provider of the person's own, from an issuer, a resource or a file.
    func openAddProvider() {
        guard dialog == nil else { return }
        let (setUp, logger) = (self.setUp, self.logger)
        let dialog = AddProviderDialog(parent: parent)
        present(dialog, focus: dialog.field) { dialog in
            guard let source = dialog.source() else { return nil }
            let organisations = dialog.organisations.isActive
            return {
                let (id, notice) = try await setUp.add(source, organisationsIdentityProvider: organisations)
                logger.info("Provider \(id) added")
                return Done(id: id, notice: notice, added: true)
            }
        }
    }

    /// Shows `dialog`; its action runs the work `job` makes of the form (nil: the form is not right yet).
    private func present<Form: FormDialog>(
        _ dialog: Form, focus: Widget, job: @escaping @MainActor (Form) -> (@Sendable () async throws -> Done)?
    ) {
        dialog.onDismiss = { [weak self] in self?.dialog = nil }
        dialog.action.onClicked { [weak self, weak dialog] in
            guard let self, let dialog, !dialog.isBusy, let work = job(dialog) else { return }
            dialog.setBusy(true)
            MainLoop.work {
                await Result.catching(work)
            } then: { [weak self, weak dialog] result in
                self?.finish(dialog, result)
            }
        }
        self.dialog = dialog
        dialog.present(focus: focus)
    }

    private func finish(_ form: FormDialog?, _ result: Result<Done, any Error>) {
        switch result {
        case .success(let done):
            form?.close()
            dialog = nil
            onDone(done)
        case .failure(let error):
            logger.notice("The provider was not kept", metadata: ["error": "\(error)"])
            form?.setBusy(false)
            form?.show(problem: HomeFolder.shortened(ProviderSetUp.sentence(for: error)))
        }
    }
}

extension Result where Failure == any Error {
    /// The outcome of async work that throws, as a value to hand across threads.
    static func catching(_ body: () async throws -> Success) async -> Result {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
