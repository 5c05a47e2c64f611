import Foundation

/// A person who can sign in at the sandbox.
public struct SandboxUser: Codable, Sendable, Equatable {
    public var username: String
    public var password: String
    public var name: String
    public var givenName: String?
    public var familyName: String?
    public var email: String
    public var emailVerified: Bool
    /// Whether name and e-mail are public where a provider lets people hide them
    /// (GitHub's `/user` then says null, GitLab's `public_email` is empty).
    public var publicProfile: Bool

    public init(
        username: String, password: String, name: String, givenName: String? = nil,
        familyName: String? = nil, email: String, emailVerified: Bool = true, publicProfile: Bool = true
    ) {
        self.username = username
        self.password = password
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
        self.emailVerified = emailVerified
        self.publicProfile = publicProfile
    }

    enum CodingKeys: String, CodingKey {
        case username, password, name, email
        case givenName = "given_name"
        case familyName = "family_name"
        case emailVerified = "email_verified"
        case publicProfile = "public_profile"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        username = try c.decode(String.self, forKey: .username)
        password = try c.decode(String.self, forKey: .password)
        name = try c.decode(String.self, forKey: .name)
        givenName = try c.decodeIfPresent(String.self, forKey: .givenName)
        familyName = try c.decodeIfPresent(String.self, forKey: .familyName)
        email = try c.decode(String.self, forKey: .email)
        emailVerified = try c.decodeIfPresent(Bool.self, forKey: .emailVerified) ?? true
        publicProfile = try c.decodeIfPresent(Bool.self, forKey: .publicProfile) ?? true
    }
}
