import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator
@testable import ChimeSecurity

/// The admission stages a decoded control request passes in the state, with no sockets: each
/// stage's refusal, its notice for the shell's log, and what passes on.
@Suite struct AdmissionTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)
    let client = ClientAddress(routing: [Data([1])])

    func makeState(_ configure: (inout CoordinatorConfiguration) -> Void = { _ in }) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configure(&configuration)
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        return state
    }

    func incoming(
        _ command: ControlRequest.Command, requestId: String? = nil, bodyBytes: Int = 100, peer: Principal?? = nil,
        grant: AccessPolicy.Grant? = nil
    ) -> IncomingRequest {
        IncomingRequest(
            request: ControlRequest(requestId: requestId, command: command), client: client, bodyBytes: bodyBytes, peer: peer,
            grant: grant)
    }

    func reminder(_ id: ReminderID, recipient: RecipientID = "alice") -> Reminder {
        Reminder(id: id, recipient: recipient, content: Content(body: "x"), trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(3600))))
    }

    /// The error of the one reply among `directives` (at once or not).
    func refusal(_ directives: [CoordinatorDirective]) -> WireError? {
        for directive in directives {
            switch directive {
            case .reply(.failed(let error), _, _): return error
            case .replyAtOnce(let body, _): return WirePeek.error(in: body)
            default: continue
            }
        }
        return nil
    }

    @Test func aLargeBodyIsRefusedUnlessItsOperationSplitsIntoRecords() {
        var state = makeState()
        let large = CoordinatorState.maximumSingleRecordRequestBytes + 1
        let refused = state.onControlRequest(incoming(.register(Recipient(id: "alice")), bodyBytes: large), at: Self.t0)
        #expect(refusal(refused)?.code == .tooLarge)
        guard case .requestRefused(.register, .recordSize, nil, let error)? = state.takeNotices().first else {
            Issue.record("no notice"); return
        }
        #expect(error.code == .tooLarge)
        let scheduled = state.onControlRequest(incoming(.schedule([reminder("r")]), bodyBytes: large), at: Self.t0)
        guard case .reply(.scheduled, _, _)? = scheduled.last else { Issue.record("\(scheduled)"); return }
    }

    @Test func aRegistrationWithTooManyCategoriesIsRefused() {
        var state = makeState { $0.maxCategoriesPerRecipient = 1 }
        let categories = [NotificationCategory(identifier: "a", actions: []), NotificationCategory(identifier: "b", actions: [])]
        let directives = state.onControlRequest(incoming(.register(Recipient(id: "alice", categories: categories))), at: Self.t0)
        #expect(refusal(directives)?.field == "recipient.categories")
        guard case .requestRefused(_, .categories, _, _)? = state.takeNotices().first else { Issue.record("no notice"); return }
        #expect(state.durable.recipients.registered.isEmpty)
    }

    @Test func withSecurityAConnectionWithoutAKeyMayDoNothingAndAScopedKeyIsNarrowed() {
        var state = makeState()
        let keyless = state.onControlRequest(incoming(.ping, peer: .some(nil)), at: Self.t0)
        #expect(refusal(keyless)?.code == .forbidden)
        guard case .requestRefused(.ping, .authorization, nil, _)? = state.takeNotices().first else { Issue.record("no notice"); return }
        let principal = Principal(role: .client, publicKey: "k")
        let grant = AccessPolicy.Grant(role: .client, scope: RecipientScope(recipients: ["alice"]), name: "test")
        let outside = state.onControlRequest(
            incoming(.schedule([reminder("r", recipient: "bob")]), peer: .some(principal), grant: grant), at: Self.t0)
        #expect(refusal(outside)?.code == .forbidden)
        guard case .requestRefused(_, .authorization, .client, _)? = state.takeNotices().first else { Issue.record("no notice"); return }
        let inside = state.onControlRequest(
            incoming(.schedule([reminder("r", recipient: "alice")]), peer: .some(principal), grant: grant), at: Self.t0)
        guard case .reply(.scheduled, _, let address)? = inside.last else { Issue.record("\(inside)"); return }
        #expect(address.scope == grant.scope, "the reply's address carries the key's scope")
        #expect(state.takeNotices().isEmpty)
    }

    @Test func storeOperationsAreServedByTheService() {
        var state = makeState()
        for command in [ControlRequest.Command.snapshot, .compact, .store] {
            let directives = state.onControlRequest(incoming(command, requestId: "s"), at: Self.t0)
            guard case .serveStoreRequest(let request, let address)? = directives.first, directives.count == 1 else {
                Issue.record("\(directives)"); return
            }
            #expect(request.command == command && address == client)
        }
    }

    @Test func whileTheStoreIsFullChangesAreRefusedAtOnceAndReadsAnsweredAtOnce() throws {
        var state = makeState()
        state.onStoreOpened(isFileStore: true, entriesSinceSnapshot: 0)
        let applied = state.onControlRequest(incoming(.schedule([reminder("r")]), requestId: "q1"), at: Self.t0)
        #expect(applied.contains { if case .append = $0 { true } else { false } })
        state.onStoreMode(isFull: true)
        let refused = state.onControlRequest(incoming(.schedule([reminder("s")]), requestId: "q2"), at: Self.t0)
        #expect(refused.count == 1 && refusal(refused)?.code == .storeFull)
        #expect(refusal(state.onControlRequest(incoming(.store), at: Self.t0))?.code == .storeFull)
        // A retry of a request already applied gets its remembered reply, after its entries.
        let retried = state.onControlRequest(incoming(.schedule([reminder("r")]), requestId: "q1"), at: Self.t0)
        guard case .replyEncoded? = retried.last else { Issue.record("\(retried)"); return }
        let status = state.onControlRequest(incoming(.status), at: Self.t0)
        guard case .replyAtOnce(let body, _)? = status.last, status.count == 1 else { Issue.record("\(status)"); return }
        let report = try WireCodec().decode(ControlReply<StatusReport>.self, from: body)
        #expect(report.result?.storeFull == true)
        state.onStoreMode(isFull: false)
        guard case .reply(.status(let after), _, _)? = state.onControlRequest(incoming(.status), at: Self.t0).last else {
            Issue.record("no status"); return
        }
        #expect(after.storeFull == false)
    }

    @Test func withoutAFileStoreStatusSaysNothingOfTheStoreMode() {
        var state = makeState()
        guard case .reply(.status(let report), _, _)? = state.onControlRequest(incoming(.status), at: Self.t0).last else {
            Issue.record("no status"); return
        }
        #expect(report.storeFull == nil)
    }

    @Test func aMoveStepThatReadsTheMapWaitsForAFreshReadOfTheRegister() {
        var state = makeState()
        let begin = ControlRequest.Command.move(.begin(SlotMove(id: SlotMoveID("m1"), slots: [1], source: 0, target: 1, slotCount: 4096)))
        // No register followed: the step is decided at once.
        guard case .reply(let first, _, _)? = state.onControlRequest(incoming(begin, requestId: "m"), at: Self.t0).last,
            case .failed(let unavailable) = first
        else { Issue.record("no reply"); return }
        #expect(unavailable.code == .unavailable, "no register")
        state.onMapRegisterFollowed(name: "file:/tmp/register.json")
        let asked = state.onControlRequest(incoming(begin, requestId: "m"), at: Self.t0)
        #expect(asked.first == .readMapRegister)
        #expect(refusal(asked)?.code == .tryAgain)
        #expect(refusal(asked)?.retryAfterMilliseconds == 5)
        let again = state.onControlRequest(incoming(begin, requestId: "m"), at: Self.t0)
        #expect(!again.contains(.readMapRegister), "one read per step")
        #expect(refusal(again)?.retryAfterMilliseconds == 10)
        state.onMapRead(record: nil, freshReadsDone: 1)
        let decided = state.onControlRequest(incoming(begin, requestId: "m"), at: Self.t0)
        #expect(refusal(decided)?.code == .unavailable, "decided on the map record (none here)")
        let status = state.onControlRequest(incoming(.move(.status())), at: Self.t0)
        guard case .reply(.move, _, _)? = status.last else { Issue.record("\(status)"); return }
    }
}
