import Crypto
import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// A DPoP key in a TPM 2.0 (Debian's swtpm, a software TPM, here): made there and non-exportable, as
/// tpm2-tools sees it from outside; its proofs verify with its public key and bind a sign-in at the
/// sandbox; what is kept of it works again in a new process once the same TPM answers; a TPM that
/// went away is a sentence, and the sign-in is kept.
@Suite struct TPMKeyTests {
    /// Runs a tpm2-tools command against `swtpm`; its exit status and what it said.
    /// Then flushes every transient object: without the kernel's resource manager between them (swtpm is
    /// reached directly), what each tool leaves loaded would fill the TPM's few object slots.
    func tpm2(_ swtpm: RunningSwtpm, _ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let environment = ["TPM2TOOLS_TCTI=\(swtpm.tpm.tcti)", "TSS2_LOG=all+NONE"]
        let (status, output) = try await Spawned.run("/usr/bin/env", environment + ["/usr/bin/tpm2"] + arguments)
        _ = try await Spawned.run("/usr/bin/env", environment + ["/usr/bin/tpm2", "flushcontext", "-t"])
        return (status, String(decoding: output, as: UTF8.self))
    }

    @Test func aKeyMadeInTheTPMSignsThereAndCannotBeTakenOut() async throws {
        let swtpm = try RunningSwtpm.start()
        let key = try await DPoPKey.made(in: swtpm.tpm)
        #expect(key.stored.hasPrefix("tpm2.") && key.whereKept.hasPrefix("in the TPM"))
        let url = try #require(URL(string: "https://api.example/notes"))
        let proof = try await key.proof(method: "GET", url: url, accessToken: "at")
        let parts = proof.split(separator: ".")
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: key.point)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)), "the TPM signed the proof")
        #expect(DPoPKey(stored: key.stored)?.thumbprint == key.thumbprint)

        // From outside: the blobs load under the TPM's storage key, fixed to this TPM and its parent (the
        // attributes say it: fixedTPM, fixedParent); duplication, the only way a TPM lets a key out, is refused.
        guard case .tpm(let held) = key.custody else {
            Issue.record("not a TPM's key")
            return
        }
        let files = swtpm.directory
        try held.publicBlob.write(to: files.appendingPathComponent("key.pub"))
        try held.privateBlob.write(to: files.appendingPathComponent("key.priv"))
        let primary = try await tpm2(
            swtpm,
            [
                "createprimary", "-C", "o", "-g", "sha256", "-G", "ecc",
                "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt", "-c", files.path + "/srk.ctx",
            ])
        #expect(primary.status == 0, "\(primary.output)")
        let loaded = try await tpm2(
            swtpm,
            [
                "load", "-C", files.path + "/srk.ctx", "-u", files.path + "/key.pub", "-r", files.path + "/key.priv", "-c",
                files.path + "/key.ctx",
            ])
        #expect(loaded.status == 0, "\(loaded.output)")
        let described = try await tpm2(swtpm, ["readpublic", "-c", files.path + "/key.ctx"])
        #expect(
            described.output.contains("fixedtpm") && described.output.contains("fixedparent") && described.output.contains("sign"),
            "\(described)")
        let duplicated = try await tpm2(
            swtpm,
            [
                "duplicate", "-C", "null", "-c", files.path + "/key.ctx", "-G", "null", "-r", files.path + "/dup.priv", "-s",
                files.path + "/dup.seed",
            ])
        #expect(duplicated.status != 0 && !FileManager.default.fileExists(atPath: files.path + "/dup.priv"), "the key cannot be taken out")
    }

    @Test func aSignInBoundToATPMsKeyRenewsInANewProcessAndATPMThatWentAwayIsASentence() async throws {
        let swtpm = try RunningSwtpm.start()
        let live = try await LiveSandbox(["--dpop", "on"]) { $0.dpop = true }
        let key = try await DPoPKey.made(in: swtpm.tpm)
        let request = AuthorizationRequest(configuration: live.configuration, dpopKey: key)
        let token = try await live.session().signIn(using: FormPostingUserAgent(), request: request).token
        #expect(token.dpopKey == key.stored && token.tokenType == "DPoP")
        let seen = try await HTTPClient().postForm(
            "\(live.sandbox.baseURL)/introspect", [("token", token.accessToken), ("client_id", live.configuration.clientID)]
        ).json
        #expect((seen["cnf"] as? [String: String])?["jkt"] == key.thumbprint)

        // The TPM goes away: the renewal cannot be proved, which is said, and nothing is lost.
        await swtpm.stop()
        let refusal = await #expect(throws: OAuthError.self) { try await live.session().renewedToken() }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("The TPM that holds the sign-in's key"), "\(String(describing: refusal))")
        #expect(try live.store.load(for: "sandbox")?.accessToken == token.accessToken, "the sign-in is kept")
        // The same TPM again (a restart, a new process reading what was kept): it renews, proved by the TPM.
        try swtpm.startAgain()
        let renewed = try await live.session().renewedToken()
        #expect(renewed.accessToken != token.accessToken && renewed.dpopKey == key.stored)
        #expect(try await live.profiles.fetch(using: live.session()).name == "Ada Lovelace", "UserInfo takes the TPM's proof")
    }

    @Test func theMachinesTPMIsTheOneNamedOrTheKernelsWhereThisUserMayUseIt() {
        #expect(TPM.ofThisMachine(environment: ["LATCHKEY_TPM": "swtpm:path=/x"]) == TPM(tcti: "swtpm:path=/x"))
        #expect(TPM.ofThisMachine(environment: ["LATCHKEY_TPM": "none"], device: "/dev/null") == nil)
        #expect(TPM.ofThisMachine(environment: [:], device: "/dev/null") == TPM(tcti: "device:/dev/null"))
        #expect(TPM.ofThisMachine(environment: [:], device: "/nonexistent/tpmrm0") == nil)
        #expect(DPoPKey(stored: "tpm2.bm9uZQ.AAAA.AAAA") == nil, "a blob that is no key's")
    }

    /// Reaching tpm2-tss quiets it (TSS2_LOG) without freeing or changing the environment array anyone
    /// may be reading: a `setenv` there, beside a thread starting a program with `environ`, could free the
    /// array that start was reading (a test's posix_spawn failed with EFAULT). In a process of its own (an
    /// exit test), where tpm2-tss is reached the first time; the array is glibc's own first (a `setenv`),
    /// the kind a later `setenv` would move, and something is allocated after it, so that it would.
    @Test func reachingTheTPMQuietsItAndFreesNoEnvironment() async {
        await #expect(processExitsWith: .success) {
            unsetenv("TSS2_LOG")
            setenv("LATCHKEY_GROWN_BY_GLIBC", "1", 1)
            let before = environ
            var entries: [UnsafeMutablePointer<CChar>?] = []
            while let entry = before[entries.count] { entries.append(entry) }
            let after = malloc(64)
            defer { free(after) }
            let socket = FileManager.default.temporaryDirectory.appendingPathComponent("no-tpm-\(getpid())").path
            guard (try? TPMKey.make(in: TPM(tcti: "swtpm:path=\(socket)"))) == nil else { exit(2) }  // nothing answers there
            guard let quiet = getenv("TSS2_LOG"), String(cString: quiet) == "all+NONE" else { exit(3) }
            for (index, entry) in entries.enumerated() where before[index] != entry { exit(4) }
            guard before[entries.count] == nil else { exit(5) }
            exit(0)
        }
    }
}
