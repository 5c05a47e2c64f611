import AgentCore
import Foundation
import InstallLayout
import Testing

/// The agent's D-Bus interface as one table: its introspection names each method once with its
/// arguments, and docs/agent.md documents exactly those methods, with the same signatures.
@Suite struct AgentBusInterfaceTests {
    @Test func theIntrospectionNamesEachMethodOnceWithItsArguments() {
        let xml = AgentBusInterface.introspection
        #expect(xml.contains("<interface name=\"io.github.latchkey.Agent1\">"))
        for method in AgentBusMethod.allCases {
            #expect(xml.components(separatedBy: "<method name=\"\(method.rawValue)\">").count == 2, "\(method)")
            for argument in method.arguments {
                let direction = argument.input ? "in" : "out"
                #expect(xml.contains("<arg name=\"\(argument.name)\" type=\"\(argument.type)\" direction=\"\(direction)\"/>"))
            }
        }
        #expect(xml.components(separatedBy: "<method ").count - 1 == AgentBusMethod.allCases.count)
        #expect(AgentBusMethod.getToken.arguments.filter { !$0.input }.map(\.type) == ["s", "s", "x", "as"])
        #expect(AgentBusMethod.signIn.arguments.allSatisfy { $0.input })
        #expect(AgentBusMethod.getProvedToken.arguments.filter { !$0.input }.map(\.type) == ["s", "s", "x", "as", "s"])
        #expect(AgentBusMethod.allCases.filter(\.openToSandboxedApps) == [.listAccounts, .getToken, .getTokenForResource, .getProvedToken])
        #expect(AgentBusInterface.errorName(.signedOut) == "io.github.latchkey.Agent1.Error.SignedOut")
    }

    /// docs/agent.md's D-Bus table has one row per method, and each row's out column starts with
    /// the method's answer as the table gives it (so a changed signature changes the page too).
    @Test func theDocumentedTableIsTheTable() throws {
        let tree = try #require(InstallLayout.current.sourceTree, "run from a build in the source tree")
        let page = try String(contentsOf: tree.appendingPathComponent("docs/agent.md"), encoding: .utf8)
        let section = try #require(page.components(separatedBy: "## D-Bus\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let documented = rows.map { $0.dropFirst(3).prefix { $0 != "`" } }.map(String.init)
        #expect(documented == AgentBusMethod.allCases.map(\.rawValue))
        for (row, method) in zip(rows, AgentBusMethod.allCases) {
            let columns = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let outputs = method.arguments.filter { !$0.input }.map(\.type)
            let inputs = method.arguments.filter(\.input).map(\.type)
            for type in inputs { #expect(columns[2].contains("`\(type)`"), "\(method): in column \(columns[2])") }
            for type in outputs { #expect(columns[3].contains("`\(type)`"), "\(method): out column \(columns[3])") }
        }
    }
}
