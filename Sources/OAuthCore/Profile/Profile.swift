import FoundationEssentials

/// A signed-in person, as the app shows them.
public struct Profile: Sendable, Equatable, CustomStringConvertible {
    public var name: String?
    public var email: String?
    /// Whether the provider checked the e-mail address; nil when it does not say.
    public var emailVerified: Bool?
    public var pictureURL: URL?
    /// Safe to hand to a browser: https (or http on loopback) only.
    public var profileURL: URL?
    /// Why there is no profile URL, when the provider explains it.
    public var note: String?
    /// Who this is at the provider (the ID token's `sub`, else the profile's id): what tells one
    /// account from another. Kept only as a digest (`Account.subject`).
    public var subject: String?
    /// What the provider takes as a login hint for this person (see `ProfileMapping.loginHint`).
    public var loginHint: String?

    public init(
        name: String? = nil, email: String? = nil, emailVerified: Bool? = nil, pictureURL: URL? = nil, profileURL: URL? = nil,
        note: String? = nil
    ) {
        self.name = name
        self.email = email
        self.emailVerified = emailVerified
        self.pictureURL = pictureURL
        self.profileURL = profileURL
        self.note = note
    }

    public var description: String {
        "Profile(\(name ?? "no name"), \(email ?? "no e-mail"), \(profileURL?.absoluteString ?? "no profile URL"))"
    }
}
