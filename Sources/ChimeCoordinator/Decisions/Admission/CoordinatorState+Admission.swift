import ChimeCore
import ChimeSecurity
import ChimeStore
import ChimeWire
import Foundation

/// Admission: the stages a decoded control request passes before it is answered, each one
/// concern, in order (as swift-nio's channel handlers are) — the journal record's size, the
/// registration's categories, the peer's authorization, the store-full mode, the store
/// operations, and the fresh map read a `move` step waits for; then ``onRequest(_:from:at:monotonic:soundProblems:)``.
/// Pure, like every decision: the shell only decodes the request and carries out what comes
/// back, so a simulation drives admission as it drives the rest.
extension CoordinatorState {
    /// The largest request whose operation journals its contents in one entry (`register`,
    /// `act`, …), in bytes: half a journal record, so the entry's JSON always fits.
    public static let maximumSingleRecordRequestBytes = RecordFraming.maximumPayloadLength / 2

    /// The operations whose requests may be larger: each reminder or id is checked on its own,
    /// or split into several entries.
    static let operationsSplitIntoRecords: Set<ControlOperation> = [.schedule, .cancel, .enable, .disable, .list]

    /// The operations the service serves from the store (`serveStoreRequest`).
    static let storeOperations: Set<ControlOperation> = [.snapshot, .compact, .store]

    /// Admits and answers one decoded control request.
    /// - Returns: the directives: a refusal by a stage (noted as `.requestRefused` for the
    ///   shell's per-peer log), the store-full mode's answer, a store operation to serve, a
    ///   `try_again` while a fresh map read is under way, or the request's own answer.
    /// - Parameters: `now` and `monotonic` as for `onTick(now:monotonic:)`.
    public mutating func onControlRequest(_ incoming: IncomingRequest, at now: Date, monotonic: Double? = nil) -> [CoordinatorDirective] {
        observeClocks(now, monotonic: monotonic)
        let request = incoming.request
        var client = incoming.client
        if let error = recordSizeRefusal(of: request, bodyBytes: incoming.bodyBytes) {
            return refuse(request, error, at: .recordSize, to: client)
        }
        if let error = categoriesRefusal(of: request) { return refuse(request, error, at: .categories, to: client) }
        if let peer = incoming.peer {
            if let denial = authorizationRefusal(of: request, from: peer, grant: incoming.grant) {
                note(.requestRefused(request.operation, stage: .authorization, role: peer?.role, error: denial))
                return onUndecodableRequest(denial, requestId: request.requestId, from: client)
            }
            client.scope = incoming.grant?.scope
            client.quota = incoming.grant?.quota
        }
        if upkeep.isFull, let directives = admitWhileStoreFull(request, from: client, at: now, monotonic: monotonic) {
            return directives
        }
        if Self.storeOperations.contains(request.operation) { return [.serveStoreRequest(request, from: client)] }
        if case .move(let move) = request.command, let waiting = awaitFreshMapRead(step: move.step, requestId: request.requestId, from: client) {
            return waiting
        }
        return onRequest(request, from: client, at: now, monotonic: monotonic, soundProblems: incoming.soundProblems)
    }

    /// The record-size stage: `too_large` for a request whose journal entry would carry its
    /// contents in one record and does not fit half of one.
    func recordSizeRefusal(of request: ControlRequest, bodyBytes: Int) -> WireError? {
        guard bodyBytes > Self.maximumSingleRecordRequestBytes, !Self.operationsSplitIntoRecords.contains(request.operation) else {
            return nil
        }
        return WireError(
            .tooLarge,
            "a \(request.operation.rawValue) request takes at most \(Self.maximumSingleRecordRequestBytes) bytes, not \(bodyBytes)")
    }

    /// The categories stage: `too_large` for a registration with more than
    /// `maxCategoriesPerRecipient` categories.
    func categoriesRefusal(of request: ControlRequest) -> WireError? {
        guard case .register(let recipient) = request.command, recipient.categories.count > configuration.maxCategoriesPerRecipient
        else { return nil }
        return WireError(
            .tooLarge,
            "a recipient has at most \(configuration.maxCategoriesPerRecipient) categories, not \(recipient.categories.count) (limits.maxCategoriesPerRecipient)",
            field: "recipient.categories")
    }

    /// The authorization stage: why `peer` (with its key's `grant` now) may not make
    /// `request`, or `nil`; a connection without an authenticated key may make none.
    func authorizationRefusal(of request: ControlRequest, from peer: Principal?, grant: AccessPolicy.Grant?) -> WireError? {
        guard let peer else { return WireError(.forbidden, "this connection has no authenticated key") }
        return authorize(request, for: peer, grant: grant)
    }

    /// A refusal by the record-size or categories stage, noted for the shell's log.
    private mutating func refuse(
        _ request: ControlRequest, _ error: WireError, at stage: AdmissionStage, to client: ClientAddress
    ) -> [CoordinatorDirective] {
        note(.requestRefused(request.operation, stage: stage, role: nil, error: error))
        return onUndecodableRequest(error, requestId: request.requestId, from: client)
    }
}
