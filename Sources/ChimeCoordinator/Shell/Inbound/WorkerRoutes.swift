import ChimeCore
import ChimeWire
import Foundation

/// Where the dispatch ROUTER reaches each worker: the routing id of the connection the worker
/// last announced itself on and, with keys, that connection's key.
///
/// The dispatch ROUTER hands a routing id over to the newest connection that claims it
/// (`ZMQ_ROUTER_HANDOVER`): without it libzmq parks the second connection as anonymous and
/// never reads it again, so everything it sent and its pipes outlive it (issue 37, 4 MiB a
/// connection). A live worker's route therefore must not be guessable: Chime's workers send
/// their id, `/` and 32 random hex digits (`DispatchRoute`), and an announcement
/// moves a live worker's route only when it comes with the key that worker announced itself
/// with (keys off, every announcement carries the same `nil` key).
struct WorkerRoutes {
    /// One worker's route.
    struct Route: Equatable {
        /// The routing id of the connection the worker last announced itself on.
        var routingID: Data
        /// The public key of that connection (Z85), `nil` without keys.
        var key: String?
    }

    /// What became of an announcement.
    enum Claim: Equatable {
        /// Recorded: firings for the worker go to this connection.
        case accepted
        /// The routing id names another worker (neither its id nor its id, `/` and a suffix).
        case refusedForeignRoutingID
        /// A live worker holds the id with another key; nothing changed.
        case refusedHeldByLiveWorker
    }

    /// The route of every worker that announced itself and is not yet forgotten.
    private(set) var routes: [WorkerID: Route] = [:]
    /// The entry count at which the next claim of a new worker first drops forgotten workers:
    /// doubled after each sweep, so sweeps cost O(1) per claim however many ids a peer makes up.
    private var sweepAt: Int

    /// An empty table that first sweeps at `sweepAt` entries (at least 1).
    init(sweepAt: Int = 64) {
        self.sweepAt = max(1, sweepAt)
    }

    /// How many workers have a route.
    var count: Int { routes.count }

    /// The routing id firings for `worker` go to: its route, else its id (a worker known from
    /// the journal that has not announced itself since; libzmq refuses it when unknown).
    func routingID(for worker: WorkerID) -> Data {
        routes[worker]?.routingID ?? Data(worker.rawValue.utf8)
    }

    /// The key `worker` announced itself with, `nil` when it has not (or without keys).
    func key(of worker: WorkerID) -> String? {
        routes[worker]?.key
    }

    /// An announcement of `worker` on the connection `routingID` with `key`.
    /// - Parameters:
    ///   - isAlive: whether the worker that holds `worker`'s route is alive.
    ///   - isKnown: whether the coordinator still lists a worker; a sweep drops the others.
    mutating func claim(
        _ worker: WorkerID, on routingID: Data, key: String?, isAlive: Bool, isKnown: (WorkerID) -> Bool
    ) -> Claim {
        guard DispatchRoute.isRoute(routingID, of: worker) else { return .refusedForeignRoutingID }
        if let held = routes[worker] {
            if held.key != key, isAlive { return .refusedHeldByLiveWorker }
        } else if routes.count >= sweepAt {
            routes = routes.filter { isKnown($0.key) }
            sweepAt = max(sweepAt, routes.count * 2)
        }
        routes[worker] = Route(routingID: routingID, key: key)
        return .accepted
    }
}
