/// The sandbox's HTML: plain, accessible forms with no external resources.
enum Pages {
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    private static let style = """
        body{font-family:Cantarell,"DejaVu Sans",sans-serif;background:#f6f5f4;color:#241f31;margin:0}
        main{max-width:26rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem;
        box-shadow:0 1px 3px rgba(0,0,0,.2)}
        h1{font-size:1.4rem;margin-top:0}
        label{display:block;margin-top:1rem;font-weight:bold}
        input{box-sizing:border-box;width:100%;padding:.5rem;margin-top:.25rem;font-size:1rem}
        .buttons{display:flex;gap:1rem;margin-top:1.5rem}
        button{flex:1;padding:.6rem;font-size:1rem;border-radius:6px;border:1px solid #9a9996;background:#fff}
        button.allow{background:#3584e4;color:#fff;border-color:#1c71d8}
        .error{background:#fbe9eb;color:#a51d2d;padding:.6rem;border-radius:6px}
        .note{color:#5e5c64;font-size:.9rem}
        """

    static func document(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>\(style)</style>
        </head>
        <body>
        <main>
        \(body)
        </main>
        </body>
        </html>
        """
    }

    static let scopeDescriptions: [String: String] = [
        "openid": "Confirm who you are",
        "profile": "See your name, picture and profile page",
        "email": "See your e-mail address",
        "offline_access": "Stay signed in when you are away",
    ]

    static func signIn(
        clientName: String, scopes: [String], requestID: String, action: String = "/authorize",
        descriptions: [String: String] = [:], imitating: String? = nil, username: String = "", error: String? = nil,
        choosingAccount: Bool = false
    ) -> String {
        let choosing =
            choosingAccount
            ? "<p class=\"choose\">Choose the account to sign in with: any of this provider's users, not only the last one.</p>" : ""
        let scopeItems = scopes.map { "<li>\(escape(descriptions[$0] ?? scopeDescriptions[$0] ?? $0))</li>" }.joined()
        let errorBlock = error.map { "<p class=\"error\" role=\"alert\">\(escape($0))</p>" } ?? ""
        return document(
            title: "Sign in – Latchkey Sandbox",
            body: """
                <h1>Sign in to Latchkey Sandbox</h1>
                \(choosing)
                <p><strong>\(escape(clientName))</strong> would like to:</p>
                <ul>\(scopeItems)</ul>
                \(errorBlock)
                <form method="post" action="\(escape(action))">
                <input type="hidden" name="request_id" value="\(escape(requestID))">
                \(credentialsAndAnswer(username: username))
                </form>
                <p class="note">An offline demo provider on this computer\(imitating.map { ", behaving like \(escape($0))" } ?? ""). Nothing you type leaves it.</p>
                """)
    }

    /// RFC 8628's verification page: the code the device shows, who signs in, Allow or Deny.
    static func device(userCode: String, action: String, username: String = "", error: String? = nil) -> String {
        let errorBlock = error.map { "<p class=\"error\" role=\"alert\">\(escape($0))</p>" } ?? ""
        return document(
            title: "Sign in a device – Latchkey Sandbox",
            body: """
                <h1>Sign in a device</h1>
                <p>Type the code the device shows, then sign in to let it use your account.</p>
                \(errorBlock)
                <form method="post" action="\(escape(action))">
                <label for="user_code">Code</label>
                <input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" value="\(escape(userCode))">
                \(credentialsAndAnswer(username: username))
                </form>
                <p class="note">An offline demo provider on this computer. Nothing you type leaves it.</p>
                """)
    }

    /// After the verification page's answer.
    static func deviceDone(allowed: Bool) -> String {
        document(
            title: "Done – Latchkey Sandbox",
            body: allowed
                ? "<h1>Device signed in</h1><p>You can close this page: the device goes on by itself.</p>"
                : "<h1>Device refused</h1><p>The device was not signed in. You can close this page.</p>")
    }

    /// Who signs in, and Deny or Allow: the end of both sign-in forms (an app's and a device's).
    private static func credentialsAndAnswer(username: String) -> String {
        """
        <label for="username">Username</label>
        <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" value="\(escape(username))">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password">
        <div class="buttons">
        <button type="submit" name="action" value="deny">Deny</button>
        <button type="submit" name="action" value="allow" class="allow">Allow</button>
        </div>
        """
    }

    static func error(title: String, message: String) -> String {
        document(
            title: "\(title) – Latchkey Sandbox",
            body: """
                <h1>\(escape(title))</h1>
                <p class="error" role="alert">\(escape(message))</p>
                <p class="note">The sandbox did not send you back to the application, because it could not be sure where to send you safely.</p>
                """)
    }

    static func profile(_ user: SandboxUser, pictureURL: String) -> String {
        document(
            title: "\(user.name) – Latchkey Sandbox",
            body: """
                <img src="\(escape(pictureURL))" alt="" width="96" height="96">
                <h1>\(escape(user.name))</h1>
                <p>@\(escape(user.username)) on Latchkey Sandbox</p>
                <p>\(escape(user.email))</p>
                """)
    }

    /// A round avatar with the user's initials, so the app has a picture to show offline.
    static func avatar(for user: SandboxUser) -> String {
        let initials = user.name.split(separator: " ").prefix(2).compactMap(\.first).map(String.init).joined()
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96">
            <circle cx="48" cy="48" r="48" fill="#3584e4"/>
            <text x="48" y="60" font-family="sans-serif" font-size="36" fill="#fff" text-anchor="middle">\(escape(initials))</text>
            </svg>
            """
    }
}
