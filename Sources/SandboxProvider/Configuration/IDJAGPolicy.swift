import Foundation

/// One line of an organisation's policy, as its identity provider keeps it: which person (nil: any),
/// using which client at the identity provider (nil: any), may have an ID-JAG for which authorization
/// server (`audience`) and MCP server (`resource`), with at most which scopes, and under which client
/// id that server knows the app by.
public struct IDJAGPolicy: Codable, Sendable, Equatable {
    public var user: String?
    public var client: String?
    public var audience: String
    public var resource: String
    public var scopes: [String]
    /// The app's client id at the MCP server's authorization server: the ID-JAG's `client_id`.
    public var clientID: String

    enum CodingKeys: String, CodingKey {
        case user, client, audience, resource, scopes
        case clientID = "client_id"
    }

    func allows(user name: String, client id: String, audience: String, resource: String) -> Bool {
        (user == nil || user == name) && (client == nil || client == id) && self.audience == audience && self.resource == resource
    }
}
