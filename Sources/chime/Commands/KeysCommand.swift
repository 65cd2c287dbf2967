import ChimeCommandLine
import Foundation
import ChimeSecurity

/// `chime keys init DIR` and `chime keys add DIR ROLE NAME`: CURVE certificates for a cluster.
enum KeysCommand: Command {
    static let spec = CommandSpec(
        name: "keys",
        summary: "Create CURVE keys: a key directory for the coordinator, or one more key for a role.",
        usage: "chime keys init DIR\n       chime keys add DIR ROLE NAME [--recipient R]... [--recipient-prefix P]...\n                                    [--max-reminders N] [--max-reminder-bytes B]",
        options: [
            OptionSpec(name: "recipient", value: "R", help: "client keys: a recipient this key may act for.", repeats: true),
            OptionSpec(name: "recipient-prefix", value: "P", help: "client keys: recipients starting with P.", repeats: true),
            OptionSpec(
                name: "max-reminders", value: "N",
                help: "restricted client keys: reminders its recipients may hold (or 'unlimited'; default limits.tenantMaxReminders)."),
            OptionSpec(
                name: "max-reminder-bytes", value: "B",
                help: "restricted client keys: bytes those reminders, its recipients' registrations and their delivered lists may take (or 'unlimited'; default limits.tenantMaxReminderBytes)."),
        ],
        details: """
            init  makes DIR (0700) with server.key/server.key_secret and, for each role (operator,
                  client, worker, subscriber), <role>.key/<role>.key_secret plus the public
                  certificate in the role's allow-list DIR/<role>/. Existing keys are never replaced.
            add   makes NAME.key/NAME.key_secret in DIR and allows NAME.key as ROLE; a running
                  coordinator takes it on SIGHUP. Remove DIR/ROLE/NAME.key and send SIGHUP to revoke.
            Secret certificates (*.key_secret) are 0600; give each process only its own. The
            coordinator serves with --keys DIR; other processes take --key FILE.key_secret and
            --server-key DIR/server.key. The files are in czmq's zcert format (pyzmq reads them).
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        let positionals = arguments.positionals
        switch positionals.first {
        case "init" where positionals.count == 2:
            for file in try KeyDirectory.initialize(at: URL(fileURLWithPath: positionals[1])) { output(file.path) }
            return 0
        case "add" where positionals.count == 4:
            guard let role = Role(rawValue: positionals[2]) else {
                throw UsageError("ROLE must be operator, client, worker or subscriber, not '\(positionals[2])'")
            }
            let recipients = arguments.all("recipient")
            let prefixes = arguments.all("recipient-prefix")
            let scope = recipients.isEmpty && prefixes.isEmpty
                ? nil : RecipientScope(recipients: Set(recipients), prefixes: prefixes)
            let quota = TenantQuota(
                maxReminders: try limit(arguments, "max-reminders"), maxReminderBytes: try limit(arguments, "max-reminder-bytes"))
            let directory = URL(fileURLWithPath: positionals[1])
            for file in try KeyDirectory.add(
                role: role, name: positionals[3], scope: scope,
                quota: quota.maxReminders == nil && quota.maxReminderBytes == nil ? nil : quota, to: directory)
            {
                output(file.path)
            }
            return 0
        default:
            throw UsageError("give 'init DIR' or 'add DIR ROLE NAME'")
        }
    }

    /// The quota limit option `name` gives: a non-negative integer or `unlimited`; `nil` when absent.
    /// - Throws: `UsageError` for anything else.
    private static func limit(_ arguments: Arguments, _ name: String) throws -> TenantQuota.Limit? {
        guard let text = arguments.value(name) else { return nil }
        if text == "unlimited" { return .unlimited }
        guard let value = Int(text), value >= 0 else {
            throw UsageError("--\(name) must be a non-negative integer or unlimited, not '\(text)'")
        }
        return .atMost(value)
    }
}
