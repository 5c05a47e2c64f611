import ArgumentParser
import Foundation
import Logging
import SandboxProvider

/// `latchkey-sandbox`: an offline OAuth 2.0 / OpenID Connect provider on 127.0.0.1.
@main
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey-sandbox",
        abstract: "An offline OAuth 2.0 / OpenID Connect provider on 127.0.0.1, for Latchkey's first run and its tests.",
        discussion: """
            On start it prints one line, "listening http://127.0.0.1:PORT", on standard output; \
            request logs go to standard error. docs/sandbox.md lists the built-in users and clients.
            """)

    @Option(help: "TCP port on 127.0.0.1; 0 picks a free one.")
    var port: Int = 0

    @Option(name: .long, help: "Seconds an access token lives (default: as the imitated provider, else 3600).")
    var accessTokenTTL: Int?

    @Option(
        name: .long,
        help: "Seconds a refresh token lives from when it was issued, said as refresh_token_expires_in (default: for ever).")
    var refreshTokenTTL: Int?

    @Flag(
        inversion: .prefixedNo,
        help:
            "Say --refresh-token-ttl in each answer (refresh_token_expires_in), as GitHub does; --no-say-…: end them unsaid, as most providers do."
    )
    var sayRefreshTokenTTL = true

    @Option(name: .long, help: "Seconds a device must leave between checks in a sign-in on another device (RFC 8628; default 5).")
    var deviceInterval: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Pushed authorization requests (RFC 9126): off, offered, or required (the classic request in the address is refused).",
            valueName: "mode"))
    var pushedRequests: SandboxConfiguration.PushedRequests?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Narrower tokens than the grant: exchange (a refresh may name fewer scopes or a resource, and RFC 8693 token exchange is offered; the default), refresh (no exchange), or none (a refresh answers the whole grant, as GitHub's does).",
            valueName: "mode"))
    var narrowing: SandboxConfiguration.Narrowing?

    @Option(
        help: ArgumentHelp(
            "DPoP (RFC 9449): off (the default), on (a token request with a proof gets tokens bound to its key), or nonce (and every proof must carry the server's nonce).",
            valueName: "mode"))
    var dpop: SandboxConfiguration.DPoP?

    @Option(
        name: .customLong("dpop-binds"),
        help: ArgumentHelp(
            "With DPoP, the tokens bound to the proof's key: all (the default) or refresh (access tokens stay bearer tokens).",
            valueName: "tokens"))
    var dpopBinds: SandboxConfiguration.DPoPBinding?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Reproduce a real provider's documented quirks and paths: \(ProviderLikeness.Name.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "provider"))
    var behaveLike: String = "standard"

    @Option(name: .long, help: "A JSON file of users, clients and OAuth 1.0a consumers, replacing the built-in ones.")
    var config: String?

    @Option(
        name: .long,
        help:
            "Make the next answers of an endpoint fail: ENDPOINT:KIND[:COUNT], e.g. token:500:2. Endpoints: token, userinfo, revoke, discovery. Kinds: 500, html, empty, truncated, delay, close. Repeatable."
    )
    var fault: [String] = []

    @Option(name: .long, help: "Seconds a client may keep the discovery document (its Cache-Control max-age).")
    var discoveryMaxAge: Int?

    @Option(name: .long, help: "Seconds a 'delay' fault waits.")
    var faultDelay: Double = 30

    @Option(
        name: .customLong("id-token-alg"),
        help: "What signs ID tokens: ES256 or RS256 (default: as the imitated provider, RS256; else ES256).")
    var idTokenAlgorithm: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(name: .long, help: "A file where issued grants and tokens survive a restart (written 0600).")
    var stateFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What the authorization response says of iss (RFC 9207): \(SpecSituation.Iss.allCases.map(\.rawValue).joined(separator: ", ")) (default: as the imitated provider; the strict sandbox: sent).",
            valueName: "mode"))
    var iss: String?

    @Option(name: .long, help: ArgumentHelp("A path the issuer has beyond the base URL, e.g. /tenant1.", valueName: "path"))
    var issuerPath: String = ""

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where the authorization server's metadata is served: \(SpecSituation.MetadataLocation.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "where"))
    var metadataAt: String = "all"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where the protected resources' metadata is served: \(SpecSituation.ResourceMetadataLocation.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "where"))
    var resourceMetadataAt: String = "named"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Act as an MCP server's authorization server that takes ID-JAGs from the identity provider with this issuer (Enterprise-Managed Authorization).",
            valueName: "issuer"))
    var trustIdp: String?

    @Flag(name: .long, help: "Exit when standard input closes: a parent process that dies takes the sandbox with it.")
    var exitWithStdin = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        if let accessTokenTTL, accessTokenTTL <= 0 { throw ValidationError("--access-token-ttl must be positive.") }
        if let refreshTokenTTL, refreshTokenTTL <= 0 { throw ValidationError("--refresh-token-ttl must be positive.") }
        if let deviceInterval, !(1...600).contains(deviceInterval) {
            throw ValidationError("--device-interval must be from 1 to 600 seconds.")
        }
        if let discoveryMaxAge, discoveryMaxAge < 0 { throw ValidationError("--discovery-max-age must not be negative.") }
        for argument in fault where Fault(argument: argument) == nil {
            throw ValidationError("--fault \(argument): expected ENDPOINT:KIND[:COUNT], e.g. token:500:2.")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level \(logLevel).") }
        if let iss, SpecSituation.Iss(rawValue: iss) == nil { throw ValidationError("Unknown --iss \(iss).") }
        guard
            issuerPath.isEmpty || issuerPath == "/"
                || (issuerPath.hasPrefix("/") && !issuerPath.hasSuffix("/") && !issuerPath.contains("?"))
        else {
            throw ValidationError("--issuer-path must begin with / and not end with one (or be / alone), e.g. /tenant1.")
        }
        guard SpecSituation.MetadataLocation(rawValue: metadataAt) != nil else {
            throw ValidationError("Unknown --metadata-at \(metadataAt).")
        }
        guard SpecSituation.ResourceMetadataLocation(rawValue: resourceMetadataAt) != nil else {
            throw ValidationError("Unknown --resource-metadata-at \(resourceMetadataAt).")
        }
        guard ProviderLikeness.Name(rawValue: behaveLike) != nil else {
            throw ValidationError(
                "--behave-like \(behaveLike): expected one of \(ProviderLikeness.Name.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "latchkey-sandbox")

        let likeness = ProviderLikeness.named(ProviderLikeness.Name(rawValue: behaveLike) ?? .standard)
        let configuration = try configuration(likeness)
        let faults = fault.compactMap { Fault(argument: $0, delaySeconds: faultDelay) }

        if exitWithStdin {
            // The parent holds the other end of our stdin; when it goes, however it goes, so do we.
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 256)
                while read(0, &buffer, buffer.count) > 0 {}
                Foundation.exit(0)
            }
        }
        let server: SandboxServer
        do {
            server = try SandboxServer(
                configuration: configuration, likeness: likeness, faults: faults, stateFile: stateFile.map { URL(fileURLWithPath: $0) },
                idTokenAlgorithm: idTokenAlgorithm,
                situation: SpecSituation(
                    iss: iss.flatMap(SpecSituation.Iss.init(rawValue:)), issuerPath: issuerPath,
                    metadata: SpecSituation.MetadataLocation(rawValue: metadataAt) ?? .all,
                    resourceMetadata: SpecSituation.ResourceMetadataLocation(rawValue: resourceMetadataAt) ?? .named),
                logger: logger)
        } catch let error as SandboxConfigurationError {
            throw ValidationError("\(error)")
        } catch {
            throw ValidationError("Cannot read the state file \(stateFile ?? ""): \(error)")
        }
        try await server.run(port: port) { url in
            // One line a parent process can wait for, written unbuffered so it arrives through a pipe at once.
            FileHandle.standardOutput.write(Data("listening \(url)\n".utf8))
        }
    }
}

extension SandboxCommand {
    /// The configuration file's (or the built-in one), with what the command line says over it.
    func configuration(_ likeness: ProviderLikeness) throws -> SandboxConfiguration {
        var configuration = SandboxConfiguration.defaults
        if let config {
            do {
                configuration = try SandboxConfiguration.load(from: URL(fileURLWithPath: config))
            } catch {
                throw ValidationError("Cannot use \(config): \(error)")
            }
        }
        // A provider whose tokens never expire states no lifetime; ten years stands in for it.
        if let accessTokenTTL {
            configuration.accessTokenTTL = accessTokenTTL
        } else if config == nil {
            configuration.accessTokenTTL = likeness.accessTokenLifetime ?? 315_360_000
        }
        if let discoveryMaxAge { configuration.discoveryMaxAge = discoveryMaxAge }
        if let refreshTokenTTL { configuration.refreshTokenTTL = refreshTokenTTL }
        if !sayRefreshTokenTTL { configuration.saysRefreshTokenTTL = false }
        if let deviceInterval { configuration.deviceInterval = deviceInterval }
        if let pushedRequests { configuration.pushedRequests = pushedRequests }
        if let narrowing { configuration.narrowing = narrowing }
        if let dpop { configuration.dpop = dpop }
        if let trustIdp { configuration.trustedIdentityProvider = trustIdp.hasSuffix("/") ? String(trustIdp.dropLast()) : trustIdp }
        if let dpopBinds { configuration.dpopBinds = dpopBinds }
        return configuration
    }
}

extension SandboxConfiguration.PushedRequests: ExpressibleByArgument {}
extension SandboxConfiguration.Narrowing: ExpressibleByArgument {}
extension SandboxConfiguration.DPoP: ExpressibleByArgument {}
extension SandboxConfiguration.DPoPBinding: ExpressibleByArgument {}
