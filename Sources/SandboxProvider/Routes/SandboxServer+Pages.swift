import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// The public pages a profile link or picture leads to.
extension SandboxServer {
    // MARK: Public pages

    func profilePage(_ username: String) -> Response {
        guard let user = configuration.user(username) else {
            return Self.html(.notFound, Pages.error(title: "No such profile", message: "Nobody here is called \(username)."))
        }
        return Self.html(.ok, Pages.profile(user, pictureURL: "/avatar/\(user.username).svg"))
    }

    func avatar(_ file: String) -> Response {
        guard file.hasSuffix(".svg"), let user = configuration.user(String(file.dropLast(4))) else {
            return Response(status: .notFound)
        }
        return Response(
            status: .ok, headers: [.contentType: "image/svg+xml"],
            body: .init(byteBuffer: ByteBuffer(string: Pages.avatar(for: user))))
    }

    /// An opaque, stable subject identifier, as real providers give: not the username.
    static func subject(for user: SandboxUser) -> String {
        String(Base64URL.encode(SHA256.hash(data: Data("latchkey-sandbox:\(user.username)".utf8))).prefix(22))
    }

    /// The avatars, and the people's profile pages (right under the root for GitHub's and GitLab's likeness).
    func addPages(to router: Router<SandboxRequestContext>) {
        router.get("/avatar/:file") { _, context in self.avatar(context.parameters.get("file") ?? "") }
        router.get(RouterPath(likeness.profilePagePath.replacingOccurrences(of: "{username}", with: ":username"))) {
            _, context in self.profilePage(context.parameters.get("username") ?? "")
        }
    }
}
