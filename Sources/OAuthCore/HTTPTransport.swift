import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

public struct HTTPRequest: Sendable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// Seconds without progress before giving up.
    public var timeout: TimeInterval

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a request got no whole HTTP response.
public enum TransportError: Error, Equatable, Sendable {
    case timedOut
    case cannotConnect
    case connectionLost
    case other(String)
}

/// How OAuthCore speaks HTTP. URLSession by default; a program with its own
/// HTTP stack plugs it in here.
public protocol HTTPTransport: Sendable {
    /// Sends the request without following redirects. Throws `TransportError`
    /// when no whole response arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// URLSession, driven through its delegate.
///
/// Two things make the delegate necessary on Linux: redirects must not be
/// followed (a token endpoint that redirects is misbehaving), and
/// swift-corelibs-foundation waits forever on a 401 that carries
/// `WWW-Authenticate` unless the delegate answers the authentication challenge
/// (swift-corelibs-foundation#5456). OAuth servers send exactly that for
/// `invalid_client` and `invalid_token`. This transport cancels the challenge
/// and hands back the 401 with its headers.
public final class URLSessionTransport: NSObject, HTTPTransport, URLSessionDataDelegate, @unchecked Sendable {
    /// One shared instance: a URLSession holds its delegate strongly, so
    /// transports are meant to live as long as the program.
    public static let shared = URLSessionTransport()

    private struct Pending {
        let continuation: CheckedContinuation<HTTPResponse, any Error>
        var response: HTTPURLResponse?
        var data = Data()
        var challengedResponse: HTTPURLResponse?
        var challenged = false
        var timedOut = false
    }

    private let lock = NSLock()
    private var pending: [Int: Pending] = [:]
    private var session: URLSession!

    public init(configuration: URLSessionConfiguration = .ephemeral) {
        super.init()
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let task = session.dataTask(with: urlRequest)
        // Foundation on Linux does not enforce the request's timeout once the
        // server has accepted the connection; this watchdog does.
        let watchdog = Task { [weak self] in
            try await Task.sleep(for: .seconds(request.timeout))
            self?.update(task) { $0.timedOut = true }
            task.cancel()
        }
        defer { watchdog.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.withLock { pending[task.taskIdentifier] = Pending(continuation: continuation) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    private func update(_ task: URLSessionTask, _ change: (inout Pending) -> Void) {
        lock.withLock {
            if var entry = pending[task.taskIdentifier] {
                change(&entry)
                pending[task.taskIdentifier] = entry
            }
        }
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        update(dataTask) { $0.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        update(dataTask) { $0.data.append(data) }
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        update(task) {
            $0.challenged = true
            $0.challengedResponse = challenge.failureResponse as? HTTPURLResponse
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = lock.withLock({ pending.removeValue(forKey: task.taskIdentifier) }) else { return }
        if entry.challenged {
            // The 401 we declined to answer: give it back as it came.
            let response = entry.challengedResponse ?? entry.response
            entry.continuation.resume(
                returning: HTTPResponse(status: response?.statusCode ?? 401, headers: Self.headers(of: response), body: entry.data))
            return
        }
        if entry.timedOut {
            entry.continuation.resume(throwing: TransportError.timedOut)
            return
        }
        if let error {
            var mapped = Self.transportError(error)
            // Headers arrived, then the transfer failed: the answer broke off midway.
            if entry.response != nil, case .other = mapped { mapped = .connectionLost }
            entry.continuation.resume(throwing: mapped)
            return
        }
        guard let response = entry.response else {
            entry.continuation.resume(throwing: TransportError.connectionLost)
            return
        }
        entry.continuation.resume(
            returning: HTTPResponse(status: response.statusCode, headers: Self.headers(of: response), body: entry.data))
    }

    private static func headers(of response: HTTPURLResponse?) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response?.allHeaderFields ?? [:] {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        return headers
    }

    static func transportError(_ error: any Error) -> TransportError {
        let code = (error as? URLError)?.code ?? URLError.Code(rawValue: (error as NSError).code)
        switch code {
        case .timedOut: return .timedOut
        case .cannotConnectToHost, .cannotFindHost, .notConnectedToInternet, .dnsLookupFailed: return .cannotConnect
        case .networkConnectionLost, .badServerResponse, .cannotParseResponse, .zeroByteResource: return .connectionLost
        default: return .other((error as NSError).localizedDescription)
        }
    }
}
