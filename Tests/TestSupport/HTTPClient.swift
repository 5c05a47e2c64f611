import Foundation

/// What a browser or an OAuth client would get back, redirects not followed.
public struct Reply: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: Data

    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    public var error: String? { json["error"] as? String }
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The query items of the Location header, by name.
    public var redirectParameters: [String: String] {
        guard let location = header("location"), let items = URLComponents(string: location)?.queryItems else { return [:] }
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }
}

/// curl failed before a whole response arrived; `code` is curl's exit status
/// (28 timed out, 18 body shorter than announced, 52 nothing received, 56 connection reset).
public struct CurlFailure: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public var description: String { "curl exit \(code): \(message)" }
}

/// A plain HTTP client for the tests: curl, which shares nothing with the server
/// nor with OAuthCore. (URLSession on Linux hangs on a 401 with WWW-Authenticate,
/// swift-corelibs-foundation#5456, and the sandbox sends exactly those.)
public struct HTTPClient: Sendable {
    public var timeout: TimeInterval = 60

    public init(timeout: TimeInterval = 60) {
        self.timeout = timeout
    }

    public func get(_ url: String, headers: [String: String] = [:]) async throws -> Reply {
        try await send(method: "GET", url, headers: headers, body: nil)
    }

    public func postForm(_ url: String, _ fields: [(String, String)], headers: [String: String] = [:]) async throws -> Reply {
        var headers = headers
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return try await send(method: "POST", url, headers: headers, body: Data(Self.form(fields).utf8))
    }

    public func send(method: String, _ url: String, headers: [String: String], body: Data?) async throws -> Reply {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let headerFile = directory.appendingPathComponent("headers")
        let bodyFile = directory.appendingPathComponent("body")

        var arguments = [
            "--silent", "--show-error", "--max-time", String(timeout), "--request", method,
            "--noproxy", "*",  // only 127.0.0.1 is spoken to, whatever http_proxy says
            "--dump-header", headerFile.path, "--output", bodyFile.path, "--write-out", "%{http_code}",
        ]
        for (name, value) in headers { arguments += ["--header", "\(name): \(value)"] }
        // Files, not pipes, for everything curl reads and writes: a pipe's write end
        // leaks into every child spawned at the same moment (Foundation's Process does
        // not stop it), and then end-of-file never comes while those children live.
        let inputFile = directory.appendingPathComponent("request-body")
        let outputFile = directory.appendingPathComponent("stdout")
        let errorFile = directory.appendingPathComponent("stderr")
        if let body {
            try body.write(to: inputFile)
            arguments += ["--data-binary", "@\(inputFile.path)"]
        }
        arguments.append(url)
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)

        // posix_spawn, not Foundation's Process (see Spawned); the files opened close-on-exec,
        // so only the curl they are meant for gets them.
        let output = open(outputFile.path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        let errors = open(errorFile.path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        defer {
            close(output)
            close(errors)
        }
        let process = try Spawned("/usr/bin/curl", arguments, output: output, errors: errors)
        // curl's own --max-time ends it; the margin only covers a curl that hangs anyway.
        guard let exitStatus = await process.exit(timeout: timeout + 10) else {
            process.kill()
            throw CurlFailure(code: 28, message: "curl did not finish")
        }

        let message = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        guard exitStatus == 0 else { throw Self.failure(exitStatus, message, url: url) }
        let status = Int((try? String(contentsOf: outputFile, encoding: .utf8)) ?? "") ?? 0
        var fields: [String: String] = [:]
        let headerText = (try? String(contentsOf: headerFile, encoding: .utf8)) ?? ""
        for line in headerText.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Reply(status: status, headers: fields, body: (try? Data(contentsOf: bodyFile)) ?? Data())
    }

    /// A connection that broke after it was made (56 reset, 52 nothing received) also says what the
    /// kernel lists on the port then: one CI run saw a reset at the browser listener that no run
    /// since has repeated, and the next one should name its cause.
    private static func failure(_ code: Int32, _ message: String, url: String) -> CurlFailure {
        guard code == 56 || code == 52, let port = URLComponents(string: url)?.port else {
            return CurlFailure(code: code, message: message)
        }
        return CurlFailure(code: code, message: message + " (sockets on port \(port): \(PortSockets.describe(port: port)))")
    }

    public static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved)!
    }

    public static func form(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    public static func basic(_ id: String, _ secret: String) -> String {
        "Basic " + Data("\(escape(id)):\(escape(secret))".utf8).base64EncodedString()
    }
}
