import ChimeCore
import ChimeWire
import ChimeCommandLine
import Foundation
import ChimeClient

/// `--id`, `--recipient` and `--match` flags shared by `list` and `cancel`.
enum FilterOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "recipient", value: "R", help: "Only this recipient's reminders."),
        OptionSpec(name: "match", value: "KEY=VALUE", help: "Only reminders whose userInfo[KEY] equals VALUE.", repeats: true),
    ]

    static func filter(_ arguments: Arguments, ids: [String]) throws -> ReminderFilter {
        var match: [String: String] = [:]
        for pair in arguments.all("match") {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw UsageError("--match needs KEY=VALUE, not '\(pair)'")
            }
            match[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        return ReminderFilter(
            ids: ids.isEmpty ? nil : ids.map { ReminderID($0) },
            recipient: arguments.value("recipient").map { RecipientID($0) },
            match: match.isEmpty ? nil : match)
    }
}

enum ListCommand: Command {
    static let spec = CommandSpec(
        name: "list",
        summary: "List reminders in id order or by next firing, one page (250 by default) or every page.",
        usage: "chime list [ID...] [--recipient R] [--match KEY=VALUE] [--all] [--order id|next-fire] [--limit N] [--cursor C | --all-pages] [--json]",
        options: FilterOptions.specs + [
            OptionSpec(name: "all", value: nil, help: "Include delivered, disabled and finished reminders."),
            OptionSpec(
                name: "order", value: "ORDER",
                help: "id (the default: by id, then recipient) or next-fire (soonest next firing first, ties by id; reminders without one last)."),
            OptionSpec(name: "limit", value: "N", help: "Page size: at most N per page (1-\(PageSize.maximum), default \(PageSize.default))."),
            OptionSpec(name: "cursor", value: "C", help: "Start after the page that printed this nextCursor."),
            OptionSpec(
                name: "all-pages", value: nil,
                help: "Fetch every page in turn; with --json print one reminder listing per line (NDJSON)."),
            OptionSpec(name: "json", value: nil, help: "Print the coordinator's JSON reply (one page)."),
        ] + CommonOptions.specs,
        details: """
            A coordinator examines at most 5,000 reminders a request, so a selective filter (one recipient
            among many, a rare --match) can come back short; list follows the cursor until the page is full
            or the listing ends (a progress line on a terminal after a second), so a page is never empty
            while matches remain after it.
            --order next-fire lists pending reminders by their next firing (UTC), soonest first, ties by id,
            then the reminders without one (with --all: delivered, disabled, finished) in id order; its
            cursor carries the fire time and the id, and a cluster's shards are merged in that order.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        let filter = try FilterOptions.filter(arguments, ids: arguments.positionals)
        let allPages = arguments.has("all-pages")
        if allPages && arguments.value("cursor") != nil {
            throw UsageError("give --cursor or --all-pages, not both")
        }
        let json = arguments.has("json")
        let order = try listOrder(arguments.value("order"))
        let limit = try arguments.integer("limit")
        if let limit, !(1...PageSize.maximum).contains(limit) {
            throw UsageError("--limit must be from 1 to \(PageSize.maximum), not \(limit)")
        }
        var cursor = arguments.value("cursor")
        let client = try makeControlClient(arguments)
        if !allPages {
            return try listOnePage(client, filter, all: arguments.has("all"), limit: limit, cursor: cursor, order: order, json: json)
        }
        if try filter.recipient == nil && !client.isSingleShard() {
            return try listAllPagesAcrossShards(
                client, filter, all: arguments.has("all"), limit: limit, cursor: cursor, order: order, json: json)
        }
        var pageCursor: PageCursor?
        if let text = cursor {
            do { pageCursor = try PageCursor(text: text, expecting: order.cursorKind) } catch { throw UsageError(error.message) }
        }
        cursor = nil
        var printedHeader = false
        var shown = 0
        let codec = WireCodec()
        repeat {
            let request = ControlRequest(command: .list(filter, all: arguments.has("all"), limit: limit, cursor: pageCursor, order: order))
            if json {
                // Each listing printed as the coordinator wrote it: only the cursor is decoded.
                let (reply, raw) = try client.call(request, PageCursorOnly.self)
                if let listings = JSONArrayElements.elements(ofFirst: "reminders", in: raw) {
                    for listing in listings { printJSON(listing) }
                    pageCursor = try reply.result?.nextCursor.map { text in try PageCursor(text: text, expecting: order.cursorKind) }
                    continue
                }
            }
            let (reply, _) = try client.call(request, ListResult.self)
            guard let result = reply.result else { break }
            if json {
                for listing in result.reminders { printJSON(codec.encode(listing)) }
            } else {
                if !printedHeader && !result.reminders.isEmpty {
                    printedHeader = true
                    output(header)
                }
                for listing in result.reminders { output(row(listing)) }
            }
            shown += result.reminders.count
            pageCursor = try result.nextCursor.map { text in try PageCursor(text: text, expecting: order.cursorKind) }
        } while pageCursor != nil
        if !json && shown == 0 { output("no reminders") }
        return 0
    }

    /// `--order`: `id` (the default) or `next-fire`.
    /// - Throws: `UsageError` for another value.
    static func listOrder(_ value: String?) throws -> ListOrder {
        guard let value else { return .id }
        guard let order = ListOrder(rawValue: value) else {
            throw UsageError("--order must be \(ListOrder.allCases.map(\.rawValue).joined(separator: " or ")), not '\(value)'")
        }
        return order
    }

    /// One full page (``ClusterClient/filledList(_:all:limit:cursor:order:until:progress:)``): a
    /// selective filter's short pages are followed until the page is full or the listing
    /// ends, with a progress line on a terminal after the first second.
    static func listOnePage(
        _ client: ClusterClient, _ filter: ReminderFilter, all: Bool, limit: Int?, cursor: String?, order: ListOrder, json: Bool
    ) throws -> Int32 {
        let progress = ListingProgress()
        let page = try cursorAsUsage { () throws(WireError) in
            try client.filledList(filter, all: all, limit: limit, cursor: cursor, order: order, progress: progress.update)
        }
        progress.finish()
        let result = page.result
        if json {
            if let bytes = page.bytes, page.partial == nil {
                printJSON(bytes)
                return 0
            }
            return finishGathered(result, partial: page.partial, json: true)
        }
        if !result.reminders.isEmpty { output(header) }
        for listing in result.reminders { output(row(listing)) }
        if result.reminders.isEmpty && result.nextCursor == nil && page.partial == nil { output("no reminders") }
        if let next = result.nextCursor {
            output("(\(result.reminders.count) shown; more after this page: --cursor \(next), or --all-pages for every page)")
        }
        return finishGathered(EmptyResult(), partial: page.partial, json: false)
    }

    static let header = column("NEXT FIRE (UTC)", 26) + column("ID", 24) + column("RECIPIENT", 12) + column("STATE", 10)
        + column("REPEAT", 12) + "TEXT"

    /// `list --all-pages` on several shards: pages merged in `order` with a cluster cursor;
    /// a shard that did not answer ends the listing as partial (what the others had is
    /// printed; with `--json` the last line is the `partial` reply).
    static func listAllPagesAcrossShards(
        _ client: ClusterClient, _ filter: ReminderFilter, all: Bool, limit: Int?, cursor: String?, order: ListOrder, json: Bool
    ) throws -> Int32 {
        var cursor = cursor
        var shown = 0
        let codec = WireCodec()
        repeat {
            let page = try cursorAsUsage { () throws(WireError) in
                try client.list(filter, all: all, limit: limit, cursor: cursor, order: order)
            }
            let result = page.result
            if json {
                for listing in result.reminders { printJSON(codec.encode(listing)) }
            } else {
                if shown == 0 && !result.reminders.isEmpty { output(header) }
                for listing in result.reminders { output(row(listing)) }
            }
            shown += result.reminders.count
            cursor = result.nextCursor
            if let partial = page.partial {
                // NDJSON ends with the partial reply (its result holds the cursor to go on from).
                if json { return finishGathered(ListResult(reminders: [], total: nil, nextCursor: cursor), partial: partial, json: true) }
                if let next = cursor { output("(\(shown) shown; the next page: --cursor \(next))") }
                return finishGathered(EmptyResult(), partial: partial, json: false)
            }
        } while cursor != nil
        if !json && shown == 0 { output("no reminders") }
        return 0
    }

    /// A page's `nextCursor`, decoded without the rest of the page.
    struct PageCursorOnly: Codable, Sendable {
        var nextCursor: String?
    }

    static func row(_ listing: ReminderListing) -> String {
        let reminder = listing.reminder
        let next = listing.nextFireAt.map(RFC3339.format) ?? "-"
        let text = [reminder.content.title, reminder.content.body].compactMap { $0 }.joined(separator: " — ")
        var extras: [String] = []
        if let remaining = listing.remaining { extras.append("[\(remaining) left]") }
        if let note = listing.note { extras.append("[note: \(note)]") }
        let suffix = extras.isEmpty ? "" : " " + extras.joined(separator: " ")
        return column(next, 26) + column(reminder.id.rawValue, 24) + column(reminder.recipient.rawValue, 12)
            + column(listing.state.rawValue, 10) + column(reminder.trigger.repeatSummary, 12) + text + suffix
    }
}

enum CancelCommand: Command {
    static let spec = CommandSpec(
        name: "cancel",
        summary: "Cancel reminders by id, by userInfo match, or all of one recipient.",
        usage: "chime cancel [ID...] [--recipient R] [--match KEY=VALUE] [--all] [--json]",
        options: FilterOptions.specs + [
            OptionSpec(name: "all", value: nil, help: "Cancel every reminder (needed when no other filter is given)."),
            OptionSpec(name: "quiet", value: nil, help: "Print nothing on success."),
            OptionSpec(name: "json", value: nil, help: "Print the coordinator's JSON reply."),
        ] + CommonOptions.specs,
        details: """
            Prints one summary line: how many were cancelled, the first 10 ids, and the time taken.
            Named ids that matched no reminder are listed on standard error ("no reminder ID, ...")
            and make the exit status 1; --json still prints the reply as it is.
            On a cluster of several shards a cancel without --recipient goes to every shard with one
            requestId (each shard applies it once); it is not atomic across shards: when a shard does
            not answer the result is partial (exit 1) and sending the same cancel again finishes it.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        let filter = try FilterOptions.filter(arguments, ids: arguments.positionals)
        if filter.isEmpty && !arguments.has("all") {
            throw UsageError("name reminder ids, --recipient or --match (or --all to cancel everything)")
        }
        let client = try makeControlClient(arguments)
        let started = Date()
        // One server-side filtered request (one per shard, with one requestId): each
        // coordinator walks it in slices and answers once, so there is no progress to show.
        let cancelled: [ReminderID]
        if try filter.recipient != nil || client.isSingleShard() {
            let (reply, raw) = try client.call(ControlRequest(command: .cancel(filter)), CancelResult.self)
            cancelled = reply.result?.cancelled ?? []
            if arguments.has("json") {
                printJSON(raw)
                return reportUnknown(filter, cancelled: cancelled)
            }
        } else {
            let (result, partial) = try client.cancel(filter)
            if arguments.has("json") || partial != nil {
                if !arguments.has("json") && !arguments.has("quiet") { output(summary(result.cancelled, since: started)) }
                let status = finishGathered(result, partial: partial, json: arguments.has("json"))
                // A shard that did not answer may hold the ids that were not cancelled.
                return partial == nil ? reportUnknown(filter, cancelled: result.cancelled) : status
            }
            cancelled = result.cancelled
        }
        if !arguments.has("quiet") { output(summary(cancelled, since: started)) }
        return reportUnknown(filter, cancelled: cancelled)
    }

    /// Names on standard error the ids `filter` named that no cancelled reminder has, and
    /// answers the exit status: 1 when there are any, else 0.
    static func reportUnknown(_ filter: ReminderFilter, cancelled: [ReminderID]) -> Int32 {
        let found = Set(cancelled)
        var seen = Set<ReminderID>()
        let unknown = (filter.ids ?? []).filter { !found.contains($0) && seen.insert($0).inserted }
        guard !unknown.isEmpty else { return 0 }
        let whose = filter.recipient.map { " of \($0)" } ?? ""
        printError("no reminder \(unknown.map(\.rawValue).joined(separator: ", "))\(whose)")
        return 1
    }

    /// `nothing cancelled`, or `cancelled N in T s: the first 10 ids`.
    static func summary(_ cancelled: [ReminderID], since started: Date) -> String {
        guard !cancelled.isEmpty else { return "nothing cancelled" }
        let shown = cancelled.prefix(10).map(\.rawValue).joined(separator: ", ") + (cancelled.count > 10 ? ", …" : "")
        return "cancelled \(cancelled.count) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s: \(shown)"
    }
}
