import ChimeCore
import ChimeWire
import Foundation

/// Every reply and event the coordinator sends, in one queue ordered by the journal ticket
/// each waits for: a message leaves once the journal writer has made its ticket durable
/// (`JournalWriter.durableTicket`), so an acknowledged request is durable and a badge event
/// never announces an entry a crash could lose. Ticket 0 depends on nothing (a read or a
/// refusal while the store is full, a snapshot's outcome) and leaves at the next send, ahead
/// of what still waits for the journal. Messages of one ticket keep the order they came in.
///
/// Long replies (pages) are encoded on the reply encoder's thread (``ReplyEncoder``): one
/// still being encoded holds back the later replies to its client only, so one connection's
/// replies keep their order and other clients (a ping) do not wait for a page's JSON.
struct Outbox {
    /// A message waiting to leave.
    enum Message {
        case reply(Data, to: ClientAddress)
        /// A reply the reply encoder is still encoding (its job number).
        case encoding(UInt64, to: ClientAddress)
        case event(topic: String, body: Data)
    }

    /// A message that may leave now, encoded.
    enum Ready {
        case reply(Data, to: ClientAddress)
        case event(topic: String, body: Data)
    }

    private var queue = RingQueue<(ticket: UInt64, message: Message)>()
    /// The thread that encodes long replies; set while the service runs.
    var encoder: ReplyEncoder?
    /// Encodes events and short replies.
    let codec = WireCodec()
    /// The bound of one page's reply, in bytes (`limits.maxReplyBytes`).
    var maxReplyBytes = Int.max
    /// The control connections that do not read their replies.
    var unread = UnreadReplies()
    /// When (monotonic seconds) `unread` and the backlogs last forgot their idle connections.
    var unreadSweptAt = 0.0
    /// The reply bytes control connections have not taken, bounded in total.
    var replyBacklog = ConnectionBacklog(totalBytes: Int.max)
    /// The batch bytes worker connections have not taken, bounded per connection and in total.
    var dispatchBacklog = ConnectionBacklog(totalBytes: Int.max, holdsToBound: true)

    /// Whether nothing waits.
    var isEmpty: Bool { queue.isEmpty }

    /// How many messages wait.
    var count: Int { queue.count }

    /// Queues `message` to leave once `ticket` is durable (0: at once), after every message
    /// whose ticket is lower or the same.
    mutating func append(_ message: Message, after ticket: UInt64) {
        guard let last = queue.last, last.ticket > ticket else {
            queue.append((ticket, message))
            return
        }
        // Rare (a message that depends on nothing while others wait for the journal): it
        // goes in front of the first that waits for a later ticket.
        var messages = Array(queue)
        let index = messages.firstIndex { $0.ticket > ticket } ?? messages.endIndex
        messages.insert((ticket, message), at: index)
        queue = RingQueue(messages)
    }

    /// Queues the reply `outcome` to leave once `ticket` is durable: encoded here, or on the
    /// encoder's thread when it is long (``ReplyEncoder/isLong(_:)``) and the encoder holds
    /// fewer than ``ReplyEncoder/maximumBacklog`` outcomes.
    mutating func appendReply(_ outcome: ControlOutcome, requestId: String?, to client: ClientAddress, after ticket: UInt64) {
        if let encoder, ReplyEncoder.isLong(outcome), encoder.backlog < ReplyEncoder.maximumBacklog {
            append(.encoding(encoder.submit(outcome, requestId: requestId), to: client), after: ticket)
        } else {
            append(.reply(outcome.encodedReply(requestId: requestId, maxPageBytes: maxReplyBytes), to: client), after: ticket)
        }
    }

    /// Queues `event` to leave once `ticket` is durable.
    mutating func appendEvent(_ event: CoordinatorEvent, after ticket: UInt64) {
        let body: Data
        switch event {
        case .badge(let badge): body = codec.encode(badge)
        case .action(let action): body = codec.encode(action)
        case .handOver(let handOver): body = codec.encode(handOver)
        case .destinationRemoved(let removed): body = codec.encode(removed)
        case .summary(let summary): body = codec.encode(summary)
        }
        append(.event(topic: event.topic, body: body), after: ticket)
    }

    /// Takes the messages that may leave now that every ticket up to `durable` is durable, in
    /// order; a reply still being encoded, and the later replies to its client, stay in front.
    mutating func takeReady(durable: UInt64) -> [Ready] {
        var ready: [Ready] = []
        var held: [(ticket: UInt64, message: Message)] = []
        var waitingClients = Set<[Data]>()
        while let next = queue.first, next.ticket <= durable {
            _ = queue.popFirst()
            switch next.message {
            case .reply(let body, let client):
                if waitingClients.contains(client.routing) {
                    held.append(next)
                } else {
                    ready.append(.reply(body, to: client))
                }
            case .encoding(let job, let client):
                if !waitingClients.contains(client.routing), let body = encoder?.take(job) {
                    ready.append(.reply(body, to: client))
                } else {
                    waitingClients.insert(client.routing)
                    held.append(next)
                }
            case .event(let topic, let body):
                ready.append(.event(topic: topic, body: body))
            }
        }
        if !held.isEmpty {
            // Rare (a page is being encoded) and short: the held replies go back in front.
            var rest = held
            while let next = queue.popFirst() { rest.append(next) }
            queue = RingQueue(rest)
        }
        return ready
    }
}
