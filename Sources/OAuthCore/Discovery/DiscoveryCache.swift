import Crypto
import FoundationEssentials
import Logging

/// Authorization servers' discovery documents kept between runs, for as long as
/// HTTP says they stay fresh (RFC 9111 §4.2), so that a provider file naming only
/// its issuer needs no request while its copy is fresh, one conditional request
/// (`If-None-Match`, `If-Modified-Since`) when it is not, and none at all to be
/// used offline: when the server cannot be reached or has a bad moment, the stale
/// copy serves (RFC 9111 §4.2.4, RFC 5861's stale-if-error).
///
/// One file per issuer, named by a hash of it, holding the issuer, where the
/// document was found, its bytes and its validators. A file that cannot be read
/// is as good as none: it is fetched again and replaced. The documents are
/// public; nothing secret is kept here.
public struct DiscoveryCache: Sendable {
    public let directory: URL
    /// The longest a document is taken as fresh, whatever its server says: endpoints
    /// and keys move, and a year-long max-age would hide that.
    public var longestFreshness: TimeInterval = 86_400
    private let logger: Logger

    public init(directory: URL, logger: Logger = Logger(label: "OAuthCore.DiscoveryCache")) {
        self.directory = directory
        self.logger = logger
    }

    /// Where a document in hand came from.
    public enum Source: Sendable, Equatable {
        /// The cached copy, still fresh: no request was made.
        case fresh
        /// Fetched whole just now.
        case fetched
        /// The server confirmed the cached copy (304 Not Modified).
        case revalidated
        /// The cached copy, past its freshness, because the server could not be asked:
        /// the sentence says why.
        case stale(String)
    }

    /// What is kept for one issuer.
    struct Entry: Codable {
        var issuer: String
        /// The well-known location that had it: where a conditional request goes.
        var location: String
        /// The document's bytes as the server sent them.
        var document: Data
        var storedAt: Date
        var freshUntil: Date
        var etag: String?
        var lastModified: String?

        enum CodingKeys: String, CodingKey {
            case issuer, location, document
            case storedAt = "stored_at"
            case freshUntil = "fresh_until"
            case etag
            case lastModified = "last_modified"
        }
    }

    /// The issuer's cached document whatever its age, without a request: what a provider
    /// file naming only its issuer is drafted from. Nil when there is none (or it cannot be read).
    public func cachedDocument(issuer text: String) -> JSONValue? {
        guard let (issuer, _) = try? ProviderDiscovery.issuerURL(text), let entry = read(issuer) else { return nil }
        return try? ProviderDiscovery.checkedIssuer(Self.object(entry.document) ?? [:], issuer: issuer)
    }

    /// The issuer's document: the cached copy while fresh; else asked again (a
    /// conditional request where the copy has a validator), kept if HTTP allows;
    /// else, when the answer is a passing failure (the network, a 5xx, a captive
    /// portal's page) and a copy is kept, that copy. Throws a sentence when there is
    /// no copy to fall back on, or the server's answer is final (no such document,
    /// another issuer, endpoints off https).
    public func document(
        issuer text: String, network: Network = Network(), now: Date = Date()
    ) async throws -> (document: JSONValue, source: Source) {
        let (issuer, _) = try ProviderDiscovery.issuerURL(text)
        let entry = read(issuer)
        let kept = entry.flatMap { Self.object($0.document) }.flatMap { try? ProviderDiscovery.checkedIssuer($0, issuer: issuer) }
        if let entry, let kept, entry.freshUntil > now, entry.storedAt <= now { return (kept, .fresh) }
        do {
            if let entry, let kept, entry.etag != nil || entry.lastModified != nil, let location = URL(string: entry.location) {
                var conditions: [String: String] = [:]
                conditions["If-None-Match"] = entry.etag
                conditions["If-Modified-Since"] = entry.lastModified
                let response = try await ProviderDiscovery.getJSON(
                    location, endpoint: .discovery, headers: conditions, network: network)
                if response.status == 304 {
                    var confirmed = entry
                    confirmed.storedAt = now
                    confirmed.freshUntil = now + freshness(of: response, now: now)
                    // RFC 9111 §4.3.4: the 304's validators replace the kept ones.
                    confirmed.etag = response.header("etag") ?? entry.etag
                    confirmed.lastModified = response.header("last-modified") ?? entry.lastModified
                    if !Self.forbidsStoring(response) { write(confirmed) }
                    return (kept, .revalidated)
                }
                if response.status == 200 {
                    let document = try ProviderDiscovery.checkedIssuer(
                        ProviderDiscovery.jsonObject(response, endpoint: .discovery), issuer: issuer)
                    keep(issuer: issuer, location: location, response: response, now: now)
                    return (document, .fetched)
                }
                if response.status >= 500 { throw OAuthError.httpStatus(response.status, endpoint: .discovery) }
                // Anything else (moved, gone): look for it again from the start.
            }
            let found = try await ProviderDiscovery.fetch(issuer: issuer, network: network)
            keep(issuer: found.issuer, location: found.location, response: found.response, now: now)
            return (found.document, .fetched)
        } catch let error as OAuthError where error.isTransient {
            guard let entry, let kept else { throw error }
            logger.notice(
                "Using the discovery document of \(issuer) kept since \(entry.storedAt): the server could not be asked",
                metadata: ["error": "\(error)"])
            return (kept, .stale("\(error)"))
        }
    }

    // MARK: Freshness (RFC 9111 §4.2.1)

    /// How long `response` stays fresh from `now`: `max-age` less `Age`, else `Expires`
    /// less `Date`, else a tenth of the time since `Last-Modified` (§4.2.2), else none;
    /// `no-cache` none at all; never more than `longestFreshness`.
    func freshness(of response: HTTPResponse, now: Date) -> TimeInterval {
        let directives = Self.cacheDirectives(response.header("cache-control"))
        if directives["no-cache"] != nil { return 0 }
        let age = response.header("age").flatMap { Double($0.trimmed(newlines: false)) } ?? 0
        let date = response.header("date").flatMap(Self.httpDate) ?? now
        let lifetime: TimeInterval
        if let maxAge = directives["max-age"].flatMap({ $0.flatMap { Double($0) } }) {
            lifetime = maxAge
        } else if let expires = response.header("expires") {
            // An Expires that is not a date ("0", "-1") means already expired (§5.3).
            lifetime = Self.httpDate(expires).map { $0.timeIntervalSince(date) } ?? 0
        } else if let modified = response.header("last-modified").flatMap(Self.httpDate), modified < date {
            lifetime = date.timeIntervalSince(modified) / 10
        } else {
            lifetime = 0
        }
        return max(0, min(lifetime - max(0, age), longestFreshness))
    }

    /// `no-store` (§5.2.2.5): the answer must not be kept.
    static func forbidsStoring(_ response: HTTPResponse) -> Bool {
        cacheDirectives(response.header("cache-control"))["no-store"] != nil
    }

    /// `Cache-Control`'s directives by lower-case name, each with its argument (quotes removed) if any.
    static func cacheDirectives(_ header: String?) -> [String: String?] {
        var directives: [String: String?] = [:]
        for part in (header ?? "").split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmed(newlines: false) }
            guard let name = pieces.first?.lowercased(), !name.isEmpty else { continue }
            let argument = pieces.count > 1 ? pieces[1].trimming { $0 == "\"" } : nil
            // A repeated directive: the first wins, the more cautious reading for max-age is not ours to guess.
            if directives[name] == nil { directives[name] = .some(argument) }
        }
        return directives
    }

    /// An HTTP date (RFC 9110 §5.6.7); the preferred IMF-fixdate form only:
    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ text: String) -> Date? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let days = ["Mon,", "Tue,", "Wed,", "Thu,", "Fri,", "Sat,", "Sun,"]
        let parts = text.trimmed(newlines: false).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 6, days.contains(String(parts[0])), parts[5] == "GMT", parts[1].count == 2, parts[3].count == 4,
            let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]), let minute = Int(clock[1]),
            let second = Int(clock[2]), hour < 24, minute < 60, second < 61, year >= 1970,
            (1...daysIn(month: month + 1, year: year)).contains(day)
        else { return nil }
        let seconds = daysSinceEpoch(year: year, month: month + 1, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return month == 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].contains(month) ? 30 : 31
    }

    /// Days from 1970-01-01 to a date of the civil (proleptic Gregorian) calendar, from 1970 on.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let (era, yearOfEra) = (y / 400, y % 400)
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    // MARK: Files

    private func keep(issuer: String, location: URL, response: HTTPResponse, now: Date) {
        guard !Self.forbidsStoring(response) else {
            try? FileManager.default.removeItem(at: file(for: issuer))
            return
        }
        write(
            Entry(
                issuer: issuer, location: location.absoluteString, document: response.body, storedAt: now,
                freshUntil: now + freshness(of: response, now: now), etag: response.header("etag"),
                lastModified: response.header("last-modified")))
    }

    func file(for issuer: String) -> URL {
        let name = Hex.encode(SHA256.hash(data: Data(issuer.utf8)).prefix(16))
        return directory.appendingPathComponent("\(name).json")
    }

    private func read(_ issuer: String) -> Entry? {
        guard let data = try? ProviderCatalog.read(file(for: issuer)) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let entry = try? decoder.decode(Entry.self, from: data), entry.issuer == issuer else { return nil }
        return entry
    }

    /// Written whole or not at all; a cache that cannot be written only means asking again next time.
    private func write(_ entry: Entry) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(entry) else { return }
        do {
            try PrivateFile.prepareDirectory(directory)
            try PrivateFile.replace(file(for: entry.issuer), with: data)
        } catch {
            logger.notice("Could not keep the discovery document", metadata: ["error": "\(error.sentence())"])
        }
    }

    private static func object(_ data: Data) -> JSONValue? {
        JSONValue.object(parsing: data)
    }
}
