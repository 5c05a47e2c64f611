/// What follows a provider set up or added in a dialog, once the window has chosen
/// and loaded it: the sentence the dialog left ("… is set up"), said when that
/// provider is ready; and, for a provider just added that still lacks what it
/// needs (a client id), its set-up dialog, opened next.
public struct SetUpFollowUp: Sendable, Equatable {
    private var openSetUpFor: String?
    private var notice: Notice?

    private struct Notice: Sendable, Equatable {
        let id: String
        let sentence: String
    }

    public init() {}

    /// A dialog set up or added `id`: it is the provider to show next.
    public mutating func done(id: String, notice: String?, added: Bool) {
        if let notice { self.notice = Notice(id: id, sentence: notice) }
        openSetUpFor = added ? id : nil
    }

    /// `id` was loaded: whether its set-up dialog opens now (it was just added and cannot be used),
    /// and the sentence to say with it (it can be used, and was just set up).
    public mutating func loaded(_ id: String, usable: Bool) -> (openSetUp: Bool, notice: String?) {
        let openSetUp = !usable && openSetUpFor == id
        openSetUpFor = nil
        guard usable else { return (openSetUp, nil) }
        defer { notice = nil }
        return (false, notice?.id == id ? notice?.sentence : nil)
    }
}
