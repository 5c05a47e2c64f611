import ArgumentParser
import FoundationEssentials
import LatchkeyServices
import OAuthCore

/// `latchkey client-key`: the private key Latchkey keeps to prove a client at a provider
/// (private_key_jwt, RFC 7523 §2.2), made like a sign-in's DPoP key (in the TPM where there is one)
/// and kept where client secrets are; its public key printed, to register at the provider.
struct ClientKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-key",
        abstract: "Make the key Latchkey keeps to prove this client at a provider (private_key_jwt); print its public key.",
        discussion: """
            Prints the public key as a JWK Set (JSON) on standard output, for registering at the provider (its jwks, or a \
            file at its jwks_uri). The private key never leaves Latchkey: it is made in the TPM where the machine has one \
            (else in software), and kept where client secrets are (the keyring, else a private file). The provider's file \
            then says "client_authentication": "private_key_jwt" (and, for tokens with no person, "grant": \
            "client_credentials") with no private_key_file. Asked again, the same key is shown; --new makes another \
            in place of the kept one at once: its public key is to be registered at the provider before the next token.
            """)

    @Option(help: "The provider's id (its file's name in ~/.config/latchkey, without .json).")
    var provider: String

    @Flag(help: "Make a new key in place of the one kept.")
    var new = false

    @OptionGroup var keyring: KeyringWait

    func validate() throws {
        guard ProviderCatalog.isPlainName(provider) else { throw ValidationError("“\(provider)” is not a provider id.") }
    }

    func run() throws {
        let services = Services(keyringTimeout: keyring.seconds)
        let (name, new) = (ProviderCatalog.clientKeyName(provider), new)
        let (key, madeNow, place): (ClientKey, Bool, String?)
        do {
            (key, madeNow, place) = try wait {
                if !new, let stored = try await services.secrets.load(for: name), let kept = ClientKey(kept: stored) {
                    return (kept, false, nil)
                }
                let made = await ClientKey.made()
                let place = try await services.secrets.save(made.stored ?? "", for: name)
                return (made, true, place)
            }
        } catch {
            Descriptor.standardError.write("latchkey: the client key could not be kept: \(error)\n")
            throw ExitCode.failure
        }
        var jwk = key.publicJWK.members
        jwk += [.init("kid", .string(key.keyID)), .init("alg", .string(key.algorithm)), .init("use", .string("sig"))]
        print(JSONValue.object([.init("keys", .array([.object(jwk)]))]).text())
        let custody = key.whereKept
        Descriptor.standardError.write(
            "latchkey: \(madeNow ? "a new key, kept in \(place ?? "the client secret store")" : "the key kept") for \(provider) (\(custody)). "
                + "Register this public key at the provider; its file says \"client_authentication\": \"private_key_jwt\".\n")
    }
}
