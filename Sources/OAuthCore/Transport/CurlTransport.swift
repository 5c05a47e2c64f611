import CCurl
import Dispatch
import FoundationEssentials
import Synchronization

/// HTTP over libcurl, which is opened on first use rather than linked.
///
/// Why not URLSession: on Linux it is FoundationNetworking, which links
/// libcurl and ~30 libraries behind it into the program at start-up (a desktop
/// app paid ~28 ms of launch for that before it sent a single request), waits
/// forever on a 401 that carries `WWW-Authenticate`
/// (swift-corelibs-foundation#5456) and does not enforce a request's timeout
/// once connected. libcurl itself does all of this right.
///
/// Each request runs its blocking transfer on a Dispatch worker, never on
/// Swift's cooperative pool. Cancelling the task stops the transfer at
/// libcurl's next progress tick (within about a second). Redirects are not
/// followed, only http and https are spoken, no cookie is kept, certificates
/// are always verified, and loopback requests never go through a proxy.
public final class CurlTransport: HTTPTransport {
    public static let shared = CurlTransport()

    /// Answers larger than this are refused rather than held in memory.
    public let maximumBodySize: Int

    public init(maximumBodySize: Int = 10 << 20) {
        self.maximumBodySize = maximumBodySize
    }

    /// Opens libcurl now, so that the first request does not wait for it.
    /// Blocks for as long as loading takes (~10 ms): call it off any UI thread.
    public static func load() throws {
        try activity.begin()
        defer { activity.end() }
        var message = [CChar](repeating: 0, count: 256)
        guard ccurl_load(&message, message.count) == 0 else {
            throw TransportError.other(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// For a process about to exit: stops every transfer under way (at libcurl's next progress
    /// tick), waits for them and for a load in progress on another thread, and refuses any
    /// request after. Exit's clean-up runs the libraries' destructors (OpenSSL frees its locks),
    /// and a thread still inside libcurl or OpenSSL then crashes the process on its way out.
    /// Waits `seconds` at most, so that a transfer stuck past its progress ticks cannot hold
    /// the exit.
    public static func endAll(waitingAtMost seconds: Double = 5) {
        activity.endAll(waitingAtMost: seconds)
    }

    fileprivate static let activity = Activity()

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let transfer = Transfer(request: request, maximumBodySize: maximumBodySize)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global(qos: .userInitiated).async {
                    continuation.resume(with: Result { try transfer.run() })
                }
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
        }
    }
}

/// What is under way in libcurl: loads and transfers, and whether the process is ending.
private final class Activity: Sendable {
    private struct State {
        var ending = false
        var transfers: [ObjectIdentifier: Transfer] = [:]
    }
    private let state = Mutex(State())
    private let running = DispatchGroup()

    func begin(_ transfer: Transfer? = nil) throws {
        try state.withLock { state in
            if state.ending { throw TransportError.other("The program is ending; the request was not sent.") }
            running.enter()
            if let transfer { state.transfers[ObjectIdentifier(transfer)] = transfer }
        }
    }

    func end(_ transfer: Transfer? = nil) {
        state.withLock { state in
            if let transfer { state.transfers[ObjectIdentifier(transfer)] = nil }
        }
        running.leave()
    }

    func endAll(waitingAtMost seconds: Double) {
        state.withLock { state in
            state.ending = true
            for transfer in state.transfers.values { transfer.cancelled.store(true, ordering: .relaxed) }
        }
        _ = running.wait(timeout: .now() + seconds)
    }
}

/// One request and what has arrived of its answer. libcurl's callbacks reach
/// it through an unmanaged pointer while `run` holds it alive.
private final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let maximumBodySize: Int
    let cancelled = Atomic<Bool>(false)
    // Touched only by the thread in `run` and the callbacks it drives.
    var body = Data()
    var headers: [String: String] = [:]
    var tooLarge = false

    init(request: HTTPRequest, maximumBodySize: Int) {
        self.request = request
        self.maximumBodySize = maximumBodySize
    }

    func run() throws -> HTTPResponse {
        if cancelled.load(ordering: .relaxed) { throw CancellationError() }
        try CurlTransport.activity.begin(self)
        defer { CurlTransport.activity.end(self) }
        try CurlTransport.load()
        guard let handle = ccurl_easy_init() else { throw TransportError.other("libcurl could not start a transfer.") }
        defer { ccurl_easy_cleanup(handle) }

        let headerList = try Self.headerList(request.headers)
        defer { ccurl_slist_free_all(headerList) }

        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE))
        let me = Unmanaged.passUnretained(self).toOpaque()
        // A day at most, and never a trap on inf, NaN or a number past Int's range.
        let seconds = request.timeout.isFinite ? min(max(request.timeout, 0.001), 86_400) : 86_400
        let milliseconds = Int((seconds * 1000).rounded(.up))
        return try errorBuffer.withUnsafeMutableBufferPointer { errorText in
            ccurl_setopt_string(handle, CURLOPT_URL, request.url.absoluteString)
            ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
            ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds)
            ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
            ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
            ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
            // A proxy from the environment (https_proxy, …) is used, except for loopback.
            if ProviderConfiguration.isLoopback(request.url) {
                ccurl_setopt_string(handle, CURLOPT_NOPROXY, "*")
            }
            ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
            ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorText.baseAddress)
            setMethodAndBody(handle)
            ccurl_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, Transfer.receiveBody)
            ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, me)
            ccurl_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, Transfer.receiveHeader)
            ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, me)
            ccurl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
            ccurl_setopt_xferinfo_function(handle, Transfer.progress)
            ccurl_setopt_pointer(handle, CURLOPT_XFERINFODATA, me)

            let code = ccurl_easy_perform(handle)
            var status = 0
            ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            if code != CURLE_OK {
                throw failure(code, status: status, detail: String(cString: errorText.baseAddress!))
            }
            guard status > 0 else { throw TransportError.connectionLost }
            return HTTPResponse(status: status, headers: headers, body: body)
        }
    }

    /// The request's headers as libcurl takes them; a line break in one is refused, never sent.
    private static func headerList(_ headers: [String: String]) throws -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline) else {
                ccurl_slist_free_all(list)
                throw TransportError.other("A request header contained a line break.")
            }
            list = ccurl_slist_append(list, "\(name): \(value)")
        }
        // No "Expect: 100-continue" round trip before a body.
        return ccurl_slist_append(list, "Expect:")
    }

    private func setMethodAndBody(_ handle: UnsafeMutableRawPointer) {
        switch request.method {
        case "GET" where request.body == nil:
            ccurl_setopt_long(handle, CURLOPT_HTTPGET, 1)
        case "HEAD":
            ccurl_setopt_long(handle, CURLOPT_NOBODY, 1)
        default:
            // COPYPOSTFIELDS: libcurl keeps its own copy; the extra 0 keeps the buffer non-empty.
            var body = [UInt8](request.body ?? Data())
            ccurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            body.append(0)
            body.withUnsafeMutableBytes { _ = ccurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
            if request.method != "POST" { ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method) }
        }
    }

    private func failure(_ code: CURLcode, status: Int, detail: String) -> any Error {
        if cancelled.load(ordering: .relaxed) { return CancellationError() }
        if tooLarge {
            let limit = maximumBodySize >= 1 << 20 ? "\(maximumBodySize >> 20) MB" : "\(maximumBodySize) bytes"
            return TransportError.other("The answer was larger than \(limit).")
        }
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return TransportError.timedOut
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return TransportError.cannotConnect
        case CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY,
            CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return TransportError.connectionLost
        default:
            // Headers arrived, then the transfer failed: the answer broke off midway.
            if status > 0 { return TransportError.connectionLost }
            let sentence = detail.isEmpty ? String(cString: ccurl_easy_strerror(code)) : detail
            return TransportError.other(sentence.hasSuffix(".") ? sentence : sentence + ".")
        }
    }

    private static func transfer(_ pointer: UnsafeMutableRawPointer?) -> Transfer {
        Unmanaged<Transfer>.fromOpaque(pointer!).takeUnretainedValue()
    }

    private static let receiveBody: curl_write_callback = { data, size, count, context in
        let transfer = Transfer.transfer(context)
        let length = size * count
        guard transfer.body.count + length <= transfer.maximumBodySize else {
            transfer.tooLarge = true
            return 0  // anything but `length` stops the transfer
        }
        if let data { transfer.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length) }
        return length
    }

    /// One header line per call, "Name: value\r\n"; a status line starts a new
    /// response (after a 100 Continue, for instance).
    private static let receiveHeader: curl_write_callback = { data, size, count, context in
        let transfer = Transfer.transfer(context)
        let length = size * count
        guard let data else { return length }
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            transfer.headers = [:]
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmed(newlines: false).lowercased()
            let value = line[line.index(after: colon)...].trimmed()
            if let earlier = transfer.headers[name] {
                transfer.headers[name] = earlier + ", " + value
            } else {
                transfer.headers[name] = value
            }
        }
        return length
    }

    private static let progress: curl_xferinfo_callback = { context, _, _, _, _ in
        Transfer.transfer(context).cancelled.load(ordering: .relaxed) ? 1 : 0
    }
}
