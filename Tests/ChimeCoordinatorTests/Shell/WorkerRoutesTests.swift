import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Issue 37: a worker key that claims a live worker's routing id. The dispatch ROUTER hands a
/// claimed routing id to the newest connection, so the routes the coordinator keeps decide who
/// gets a worker's firings. Pure.
@Suite struct WorkerRoutesTests {
    let worker = WorkerID(rawValue: "pw-1")
    let own = Data("pw-1/00000000000000010000000000000002".utf8)
    let restarted = Data("pw-1/00000000000000030000000000000004".utf8)
    let everyoneKnown: (WorkerID) -> Bool = { _ in true }

    @Test func aWorkersRoutingIDIsItsIDASlashAndThirtyTwoHexDigits() {
        #expect(DispatchRoute.routingID(for: worker, nonce: (1, 2)) == own)
        #expect(DispatchRoute.routingID(for: worker, nonce: (.max, 0xab)) == Data("pw-1/ffffffffffffffff00000000000000ab".utf8))
        // A 223-byte id would make 256 bytes with the suffix, past libzmq's limit: the id alone.
        let long = WorkerID(rawValue: String(repeating: "w", count: 223))
        #expect(DispatchRoute.routingID(for: long, nonce: (1, 2)) == Data(long.rawValue.utf8))
        let longest = WorkerID(rawValue: String(repeating: "w", count: 222))
        #expect(DispatchRoute.routingID(for: longest, nonce: (1, 2)).count == 255)
        #expect(DispatchRoute.makeRoutingID(for: worker) != DispatchRoute.makeRoutingID(for: worker))
    }

    @Test(arguments: [
        ("pw-1", true), ("pw-1/", true), ("pw-1/anything", true), ("pw-10", false), ("pw-", false), ("pw-2", false),
        ("", false), ("xpw-1", false),
    ])
    func aRouteIsTheIDOrTheIDFollowedByASlash(routingID: String, isRoute: Bool) {
        #expect(DispatchRoute.isRoute(Data(routingID.utf8), of: worker) == isRoute)
    }

    @Test func firingsGoToTheConnectionAWorkerLastAnnouncedItselfOn() {
        var routes = WorkerRoutes()
        #expect(routes.routingID(for: worker) == Data("pw-1".utf8))
        #expect(routes.claim(worker, on: own, key: "K1", isAlive: false, isKnown: everyoneKnown) == .accepted)
        #expect(routes.routingID(for: worker) == own && routes.key(of: worker) == "K1" && routes.count == 1)
        // Restarted with the same key while the old connection still looks alive: it moves.
        #expect(routes.claim(worker, on: restarted, key: "K1", isAlive: true, isKnown: everyoneKnown) == .accepted)
        #expect(routes.routingID(for: worker) == restarted && routes.count == 1)
    }

    @Test func anotherKeyCannotTakeALiveWorkersRouteButMayTakeADeadOnes() {
        var routes = WorkerRoutes()
        _ = routes.claim(worker, on: own, key: "K1", isAlive: false, isKnown: everyoneKnown)
        let rogue = Data("pw-1".utf8)
        #expect(routes.claim(worker, on: rogue, key: "K2", isAlive: true, isKnown: everyoneKnown) == .refusedHeldByLiveWorker)
        #expect(routes.routingID(for: worker) == own && routes.key(of: worker) == "K1")
        #expect(routes.claim(worker, on: rogue, key: "K2", isAlive: false, isKnown: everyoneKnown) == .accepted)
        #expect(routes.routingID(for: worker) == rogue && routes.key(of: worker) == "K2" && routes.count == 1)
    }

    @Test func withoutKeysEveryAnnouncementMovesTheRoute() {
        var routes = WorkerRoutes()
        _ = routes.claim(worker, on: own, key: nil, isAlive: false, isKnown: everyoneKnown)
        #expect(routes.claim(worker, on: restarted, key: nil, isAlive: true, isKnown: everyoneKnown) == .accepted)
        #expect(routes.routingID(for: worker) == restarted && routes.key(of: worker) == nil)
    }

    @Test func aRoutingIDThatNamesAnotherWorkerChangesNothing() {
        var routes = WorkerRoutes()
        #expect(routes.claim(worker, on: Data("pw-2".utf8), key: "K1", isAlive: false, isKnown: everyoneKnown) == .refusedForeignRoutingID)
        #expect(routes.count == 0 && routes.routingID(for: worker) == Data("pw-1".utf8))
    }

    @Test func workersTheCoordinatorForgotLeaveTheTableAtTheNextSweep() {
        var routes = WorkerRoutes(sweepAt: 4)
        let ids = (0..<4).map { WorkerID(rawValue: "w\($0)") }
        for id in ids { _ = routes.claim(id, on: Data(id.rawValue.utf8), key: nil, isAlive: false, isKnown: everyoneKnown) }
        #expect(routes.count == 4)
        // A fifth worker: of the four only w1 is still listed.
        let fifth = WorkerID(rawValue: "w4")
        _ = routes.claim(fifth, on: Data("w4".utf8), key: nil, isAlive: false, isKnown: { $0 == ids[1] })
        #expect(routes.count == 2 && Set(routes.routes.keys) == [ids[1], fifth])
        // A peer announcing 1,000 made-up ids that are forgotten at once never holds more than 4.
        var most = 0
        for index in 0..<1000 {
            let id = WorkerID(rawValue: "made-up-\(index)")
            _ = routes.claim(id, on: Data(id.rawValue.utf8), key: "K9", isAlive: false, isKnown: { _ in false })
            most = max(most, routes.count)
        }
        #expect(most == 4 && routes.count == 2)
    }
}
