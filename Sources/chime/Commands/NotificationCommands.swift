import ChimeCore
import ChimeWire
import ChimeCommandLine
import Foundation
import ChimeClient
import ChimeSecurity

let jsonOption = OptionSpec(name: "json", value: nil, help: "Print the coordinator's JSON reply.")

enum RegisterCommand: Command {
    static let spec = CommandSpec(
        name: "register",
        summary: "Register a recipient's notification settings, attention rules, categories and delivery destinations.",
        usage: "chime register RECIPIENT [--allow alert,sound,badge|none] [--categories FILE.json] [--zone ZONE] [--token TOKEN [--current-token OLD]] [--max-pending N] [--grant time-sensitive,critical,provisional] [--quiet-hours [DAYS ]HH:MM-HH:MM]... [--throttle N/DURATION[/category|/thread]] [--opt-out CATEGORY,...] [--summary-at HH:MM,...] [--break-through-categories LIST] [--break-through-filters LIST] [--opt-out-channels [CATEGORY:]CHANNEL,...] [--locale LOCALE] [--webhook URL --webhook-secret-file FILE] [--apns-token T --apns-topic BUNDLE [--apns-sandbox]] [--fcm-token T] [--remove-destination KEY]...",
        options: [
            OptionSpec(name: "allow", value: "LIST", help: "What the recipient allows: alert,sound,badge (default all) or none."),
            OptionSpec(name: "categories", value: "FILE", help: "JSON array of categories: {identifier, actions: [{identifier, title, destructive, authenticationRequired, activationMode, textInput: {buttonTitle, placeholder}, icon: {systemImageName | templateImageName}}], minimalActions, hiddenPreviewsBodyPlaceholder, summaryFormat ('%u more reminders')}."),
            OptionSpec(name: "zone", value: "ZONE", help: "The recipient's IANA time zone."),
            OptionSpec(name: "token", value: "TOKEN", help: "Secret required by authenticationRequired actions."),
            OptionSpec(name: "current-token", value: "TOKEN", help: "The token registered now: without the operator role, needed to replace or remove it."),
            OptionSpec(name: "max-pending", value: "N", help: "Cap on the recipient's armed firings (iOS keeps 64)."),
            OptionSpec(name: "grant", value: "LIST", help: "time-sensitive, critical, provisional (quiet delivery) or none (default): interruption levels not granted are delivered as active."),
            OptionSpec(name: "quiet-hours", value: "WINDOW", help: "A quiet window on the recipient's clock (--zone), e.g. 22:00-07:00 or 'SA,SU 23:00-09:00': passive and active firings due in it are held until it ends.", repeats: true),
            OptionSpec(name: "throttle", value: "N/DURATION", help: "At most N passive and active deliveries in any DURATION (5/1h), or per category or thread (2/1h/category): the rest are held and delivered as the limit allows."),
            OptionSpec(name: "summary-at", value: "TIMES", help: "Scheduled summary times on the recipient's clock (08:00,18:00): passive and active firings wait for the next one and go out together, announced by one summary event."),
            OptionSpec(name: "opt-out", value: "LIST", help: "Category identifiers the recipient opted out of: their firings are recorded as suppressed, not delivered."),
            OptionSpec(name: "break-through-categories", value: "LIST", help: "Category identifiers whose passive and active firings are delivered in quiet hours instead of held (Focus's allowed notifications)."),
            OptionSpec(name: "break-through-filters", value: "LIST", help: "filterCriteria values whose passive and active firings are delivered in quiet hours instead of held (a Focus filter)."),
            OptionSpec(name: "opt-out-channels", value: "LIST", help: "Delivery channels (webhook, apns, fcm) the recipient opted out of: CHANNEL for every firing, CATEGORY:CHANNEL for one category's (fcm,promo:apns). The fire event is still published."),
            OptionSpec(name: "webhook", value: "URL", help: "Add a webhook destination (Standard Webhooks signing); needs --webhook-secret-file."),
            OptionSpec(name: "webhook-secret-file", value: "FILE", help: "Owner-only file (chmod 600) of the webhook's whsec_ secrets, one per line (two while rotating)."),
            OptionSpec(name: "apns-token", value: "HEX", help: "Add an APNs device token; needs --apns-topic."),
            OptionSpec(name: "apns-topic", value: "BUNDLE", help: "The app's bundle id, sent as apns-topic."),
            OptionSpec(name: "apns-sandbox", value: nil, help: "The device is registered with Apple's sandbox host."),
            OptionSpec(name: "fcm-token", value: "TOKEN", help: "Add an FCM registration token."),
            OptionSpec(name: "locale", value: "LOCALE", help: "The recipient's locale (fr, fr-CA): content's --title-key and --body-key resolve in it (notifications.stringsDirectory)."),
            OptionSpec(name: "remove-destination", value: "KEY", help: "Remove the destination with this key (webhook:URL, apns:TOKEN, fcm:TOKEN).", repeats: true),
            jsonOption,
        ] + CommonOptions.specs,
        details: """
            Without --allow, --categories, --zone, --token, --max-pending or the attention options
            (--grant, --quiet-hours, --throttle, --opt-out, --summary-at, --break-through-categories,
            --break-through-filters, --opt-out-channels, --locale), destination options change only
            the destinations and keep the rest of the registration; re-registering keeps the destinations
            and replaces everything else. Listings (chime recipient) mask secrets and tokens.
            """)

    static let registrationOptions = [
        "allow", "categories", "zone", "token", "max-pending", "grant", "quiet-hours", "throttle", "opt-out", "summary-at",
        "break-through-categories", "break-through-filters", "opt-out-channels", "locale",
    ]

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 1 else { throw UsageError("name one RECIPIENT") }
        let id = RecipientID(arguments.positionals[0])
        let add = try destinations(arguments)
        let remove = arguments.all("remove-destination")
        let client = try makeControlClient(arguments)
        let registers = registrationOptions.contains { arguments.value($0) != nil } || (add.isEmpty && remove.isEmpty)
        var raw = Data()
        var latest: RecipientResult?
        if registers {
            var categories: [NotificationCategory] = []
            if let path = arguments.value("categories") {
                guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
                do {
                    categories = try WireCodec().decode([NotificationCategory].self, from: data)
                } catch {
                    throw UsageError("\(path): \(error.field.map { "\($0): " } ?? "")\(error.message)")
                }
            }
            func list(_ flag: String) -> [String] {
                arguments.value(flag).map { text in
                    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                } ?? []
            }
            let settings = try arguments.parsed("allow") { text throws(ValidationError) in try NotificationSettings(parsing: text) } ?? .all
            let recipient = Recipient(
                id: id, settings: settings, categories: categories,
                zone: arguments.value("zone"), token: arguments.value("token"), maxPending: try arguments.integer("max-pending"),
                grants: try arguments.parsed("grant") { text throws(ValidationError) in try AuthorizationGrants(parsing: text) } ?? [],
                quietHours: try arguments.all("quiet-hours").map { text in
                    try Arguments.parse(text, flag: "quiet-hours") { text throws(ValidationError) in try QuietWindow(parsing: text) }
                },
                throttle: try arguments.parsed("throttle") { text throws(ValidationError) in try DeliveryThrottle(parsing: text) },
                optedOutCategories: list("opt-out"),
                summaryTimes: try arguments.value("summary-at").map { text in
                    try text.split(separator: ",").map { time in
                        guard let minutes = QuietWindow.minutes(of: time.trimmingCharacters(in: .whitespaces)) else {
                            throw UsageError("--summary-at takes times of day HH:MM separated by commas, not '\(text)'")
                        }
                        return minutes
                    }
                } ?? [],
                breakThrough: Optional(QuietHoursBreakThrough(
                    categories: list("break-through-categories"), filterCriteria: list("break-through-filters"))).flatMap { $0.isEmpty ? nil : $0 },
                optedOutChannels: try channelOptOuts(list("opt-out-channels")), locale: arguments.value("locale"))
            let (reply, replyJSON) = try client.call(
                ControlRequest(command: .register(recipient), currentToken: arguments.value("current-token")), RecipientResult.self)
            (latest, raw) = (reply.result, replyJSON)
            guard latest != nil else { printJSON(raw); return 0 }
        }
        if !add.isEmpty || !remove.isEmpty {
            let (reply, replyJSON) = try client.call(
                ControlRequest(command: .destinations(id, add: add, remove: remove)), RecipientResult.self)
            (latest, raw) = (reply.result, replyJSON)
        }
        guard !arguments.has("json"), let result = latest else { printJSON(raw); return 0 }
        let allowed = result.recipient.settings.allowedNames
        let destinations = result.recipient.destinations?.count ?? 0
        let granted = result.recipient.grants.grantedNames
        output("registered \(result.recipient.id): allows \(allowed.isEmpty ? "nothing" : allowed.joined(separator: ", ")), \(result.recipient.categories.count) categories, \(destinations == 0 ? "" : "\(destinations) destinations, ")badge \(result.badge)\(granted.isEmpty ? "" : ", grants \(granted.joined(separator: ", "))")")
        return 0
    }

    /// `--opt-out-channels`' entries (`fcm`, `promo:apns`) as ``ChannelOptOuts``; `nil` for none.
    /// - Throws: `UsageError` for an entry whose channel is not webhook, apns or fcm.
    static func channelOptOuts(_ entries: [String]) throws -> ChannelOptOuts? {
        var channels: [String: Set<ChannelKind>] = [:]
        for entry in entries {
            let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let (category, name) = parts.count == 2 ? (parts[0], parts[1]) : (ChannelOptOuts.everyFiring, parts[0])
            guard let channel = ChannelKind(rawValue: name), !category.isEmpty else {
                throw UsageError("--opt-out-channels takes CHANNEL or CATEGORY:CHANNEL (channels: webhook, apns, fcm), not '\(entry)'")
            }
            channels[category, default: []].insert(channel)
        }
        return channels.isEmpty ? nil : ChannelOptOuts(channels)
    }

    /// The destinations the options add, secrets read from their owner-only files.
    static func destinations(_ arguments: Arguments) throws -> [Destination] {
        var destinations: [Destination] = []
        if let url = arguments.value("webhook") {
            guard let path = arguments.value("webhook-secret-file") else { throw UsageError("--webhook needs --webhook-secret-file FILE") }
            let secrets: [String]
            do {
                secrets = try SecretFile.lines(path: path)
            } catch {
                throw UsageError(error.message)
            }
            destinations.append(.webhook(WebhookDestination(url: url, secrets: secrets)))
        } else if arguments.value("webhook-secret-file") != nil {
            throw UsageError("--webhook-secret-file belongs to --webhook URL")
        }
        if let token = arguments.value("apns-token") {
            guard let topic = arguments.value("apns-topic") else { throw UsageError("--apns-token needs --apns-topic BUNDLE") }
            destinations.append(.apns(APNsDestination(token: token, topic: topic, environment: arguments.has("apns-sandbox") ? .sandbox : .production)))
        } else if arguments.value("apns-topic") != nil || arguments.has("apns-sandbox") {
            throw UsageError("--apns-topic and --apns-sandbox belong to --apns-token")
        }
        if let token = arguments.value("fcm-token") { destinations.append(.fcm(FCMDestination(token: token))) }
        do {
            try Recipient.validateDestinations(destinations)
        } catch {
            throw UsageError("\(error.field.map { "\($0): " } ?? "")\(error.message)")
        }
        return destinations
    }
}

enum RecipientCommand: Command {
    static let spec = CommandSpec(
        name: "recipient",
        summary: "Show a registered recipient: settings, categories, destinations (secrets and tokens masked), badge.",
        usage: "chime recipient RECIPIENT [--json]",
        options: [jsonOption] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 1 else { throw UsageError("name one RECIPIENT") }
        let (reply, raw) = try makeControlClient(arguments).call(
            ControlRequest(command: .recipient(RecipientID(arguments.positionals[0]))), RecipientResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        let recipient = result.recipient
        let allowed = recipient.settings.allowedNames
        output("recipient \(recipient.id): allows \(allowed.isEmpty ? "nothing" : allowed.joined(separator: ", ")), \(recipient.categories.count) categories, badge \(result.badge), \(result.deliveredCount) delivered")
        if let zone = recipient.zone { output("zone \(zone)") }
        for destination in recipient.destinations ?? [] {
            switch destination {
            case .webhook(let webhook): output("destination \(destination.key) (\(webhook.secrets.count) secrets)")
            case .apns(let apns): output("destination \(destination.key) (topic \(apns.topic), \(apns.environment.rawValue))")
            case .fcm: output("destination \(destination.key)")
            }
        }
        return 0
    }
}

enum BadgeCommand: Command {
    static let spec = CommandSpec(
        name: "badge",
        summary: "Set a recipient's badge: N > 0 sets it; N <= 0 sets 0 and clears the delivered list.",
        usage: "chime badge RECIPIENT N [--json]",
        options: [jsonOption] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 2, let value = Int(arguments.positionals[1]) else {
            throw UsageError("give RECIPIENT and an integer N")
        }
        let (reply, raw) = try makeControlClient(arguments).call(
            ControlRequest(command: .badge(RecipientID(arguments.positionals[0]), value)), BadgeResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        output("\(result.recipient): badge \(result.badge)")
        return 0
    }
}

enum AckCommand: Command {
    static let spec = CommandSpec(
        name: "ack",
        summary: "Mark a delivered firing handled: it leaves the delivered list and the badge falls by one.",
        usage: "chime ack FIRING_ID [--json]",
        options: [jsonOption] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 1 else { throw UsageError("name one FIRING_ID") }
        let (reply, raw) = try makeControlClient(arguments).call(
            ControlRequest(command: .ack(try firingID(arguments.positionals[0]))), BadgeResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        output(result.changed ? "handled; \(result.recipient) badge \(result.badge)" : "already handled; \(result.recipient) badge \(result.badge)")
        return 0
    }
}

enum SwitchCommand {
    static func spec(_ name: String, _ summary: String) -> CommandSpec {
        let note = name == "disable"
            ? [OptionSpec(name: "note", value: "TEXT", help: "Why they are switched off: listed with them until they are switched on.")] : []
        return CommandSpec(
            name: name, summary: summary, usage: "chime \(name) ID... [--recipient R]\(note.isEmpty ? "" : " [--note TEXT]") [--json]",
            options: [
                OptionSpec(
                    name: "recipient", value: "R",
                    help: "Whose reminders (ids are per recipient); without it, every recipient's reminder of each id."),
            ] + note + [jsonOption] + CommonOptions.specs)
    }

    static func run(_ arguments: Arguments, enabled: Bool) throws -> Int32 {
        guard !arguments.positionals.isEmpty else { throw UsageError("name at least one reminder ID") }
        let client = try makeControlClient(arguments)
        let request = ControlRequest(
            command: .setEnabled(
                arguments.positionals.map { ReminderID($0) }, enabled, recipient: arguments.value("recipient").map(RecipientID.init)),
            note: arguments.value("note"))
        let verb = enabled ? "enabled" : "disabled"
        if request.routingRecipient == nil, try !client.isSingleShard() {
            // Every recipient's reminder of these ids: each shard switches its own.
            let replies = try client.scatter(request, expecting: SwitchResult.self)
            let result = SwitchResult(changed: replies.results.flatMap(\.result.changed).sorted())
            if !arguments.has("json") {
                output(result.changed.isEmpty ? "nothing changed" : "\(verb) \(result.changed.map(\.rawValue).joined(separator: ", "))")
            }
            return finishGathered(result, partial: replies.partialError, json: arguments.has("json"))
        }
        let (reply, raw) = try client.call(request, SwitchResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        output(result.changed.isEmpty ? "nothing changed" : "\(verb) \(result.changed.map(\.rawValue).joined(separator: ", "))")
        return 0
    }
}

enum EnableCommand: Command {
    static let spec = SwitchCommand.spec("enable", "Switch reminders on; the next occurrence is computed from now.")
    static func run(_ arguments: Arguments) throws -> Int32 { try SwitchCommand.run(arguments, enabled: true) }
}

enum DisableCommand: Command {
    static let spec = SwitchCommand.spec("disable", "Switch reminders off, keeping their records.")
    static func run(_ arguments: Arguments) throws -> Int32 { try SwitchCommand.run(arguments, enabled: false) }
}

enum DeliveredCommand: Command {
    static let spec = CommandSpec(
        name: "delivered",
        summary: "List a recipient's delivered, unhandled firings, newest first (or remove one).",
        usage: "chime delivered RECIPIENT [--remove FIRING_ID] [--json]",
        options: [OptionSpec(name: "remove", value: "FIRING_ID", help: "Remove this firing from the list."), jsonOption]
            + CommonOptions.specs,
        details: "Reads the whole list page by page (a reply is at most limits.maxReplyBytes); --json prints one reply with every firing.")

    /// Reads every page (a page ends at `limits.maxReplyBytes`); with `--json` prints one
    /// reply holding the whole list, as a single page's reply looks.
    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 1 else { throw UsageError("name one RECIPIENT") }
        let client = try makeControlClient(arguments)
        let recipient = RecipientID(arguments.positionals[0])
        var (reply, raw) = try client.call(
            ControlRequest(command: .delivered(recipient, remove: try arguments.value("remove").map { try firingID($0) })),
            DeliveredResult.self)
        guard var result = reply.result else { printJSON(raw); return 1 }
        var cursor = result.nextCursor
        // The list holds at most 1,000 firings (BadgeLedger.defaultDeliveredLimit) and a page at
        // least one: a coordinator that keeps answering cursors is not followed forever.
        var pages = 1
        while let text = cursor, pages < PageSize.maximum {
            pages += 1
            (reply, raw) = try client.call(
                ControlRequest(command: .delivered(recipient, remove: nil, cursor: try PageCursor(text: text, expecting: .delivered))),
                DeliveredResult.self)
            guard let page = reply.result else { printJSON(raw); return 1 }
            result.delivered += page.delivered
            result.badge = page.badge
            // A page without firings cannot end with a cursor; stop rather than ask again.
            cursor = page.delivered.isEmpty ? nil : page.nextCursor
        }
        result.nextCursor = nil
        if arguments.has("json") { printJSON(WireCodec().encode(ControlReply(requestId: nil, result: result))); return 0 }
        output("\(result.recipient): badge \(result.badge), \(result.delivered.count) delivered")
        for firing in result.delivered {
            output("  \(RFC3339.format(firing.firedAt))  \(firing.firingId)" + (firing.title.map { "  \($0)" } ?? ""))
        }
        return 0
    }
}

enum ActCommand: Command {
    static let spec = CommandSpec(
        name: "act",
        summary: "Run an action on a delivered firing (open, dismiss, snooze, or a category action).",
        usage: "chime act FIRING_ID ACTION_ID [--text TEXT] [--token TOKEN] [--snooze DURATION] [--no-wait] [--json]",
        options: [
            OptionSpec(name: "text", value: "TEXT", help: "The text typed into a text-input action (one whose category declares textInput); refused for any other action."),
            OptionSpec(name: "token", value: "TOKEN", help: "The recipient's token, for authenticationRequired actions."),
            OptionSpec(name: "snooze", value: "DURATION", help: "For snooze: how long (default from configuration)."),
            OptionSpec(name: "no-wait", value: nil, help: "Return once the action is accepted, not when it finished."),
            jsonOption,
        ] + CommonOptions.specs,
        details: "Waits (up to the action time limit + 10 s) for the worker to finish the handler; exit 1 if it failed.")

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 2 else { throw UsageError("give FIRING_ID and ACTION_ID") }
        let client = try makeControlClient(arguments)
        let snooze = try arguments.seconds("snooze")
        var (reply, raw) = try client.call(
            ControlRequest(command: .act(
                firingId: try firingID(arguments.positionals[0]), action: arguments.positionals[1],
                text: arguments.value("text"), token: arguments.value("token"), snoozeSeconds: snooze)),
            JobResult.self)
        if !arguments.has("no-wait"), let jobId = reply.result?.job.jobId {
            let configuration = try CommonOptions.configuration(arguments)
            let deadline = Date().addingTimeInterval(configuration.notifications.actionTimeLimitSeconds + 10)
            while reply.result?.status == "pending" && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                (reply, raw) = try client.call(ControlRequest(command: .job(jobId)), JobResult.self)
            }
        }
        guard let result = reply.result else { printJSON(raw); return 1 }
        if arguments.has("json") {
            printJSON(raw)
        } else {
            let reason = result.outcome?.reason.map { ": \($0)" } ?? ""
            output("\(result.job.action)\(result.job.destructive ? " (destructive)" : "") on \(result.job.firingId): \(result.status)\(reason)")
            if let text = result.outcome?.output, !text.isEmpty { output(text, terminator: text.hasSuffix("\n") ? "" : "\n") }
        }
        return result.status == "failed" ? 1 : 0
    }
}
