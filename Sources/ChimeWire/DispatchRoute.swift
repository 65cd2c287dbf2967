import ChimeCore
import Foundation

/// The routing id a worker's DEALER sets on the coordinator's dispatch ROUTER: the worker's
/// id, `/` and a random nonce (32 lowercase hex digits), so that no other connection can name
/// a live worker's route (the ROUTER hands a claimed routing id to the newest connection).
/// A worker that sets its bare id (third-party workers, older versions) is served as well.
public enum DispatchRoute {
    /// The longest routing id libzmq accepts, in bytes.
    public static let maximumBytes = 255

    /// `worker`'s id, `/` and `nonce` as 32 lowercase hex digits, or the id alone when that
    /// would pass ``maximumBytes``.
    public static func routingID(for worker: WorkerID, nonce: (UInt64, UInt64)) -> Data {
        let routed = worker.rawValue + "/" + hexDigits(nonce.0) + hexDigits(nonce.1)
        return Data((routed.utf8.count <= maximumBytes ? routed : worker.rawValue).utf8)
    }

    /// A routing id for `worker` with a nonce from the system's random source.
    public static func makeRoutingID(for worker: WorkerID) -> Data {
        var random = SystemRandomNumberGenerator()
        return routingID(for: worker, nonce: (random.next(), random.next()))
    }

    /// Whether `routingID` may carry `worker`'s announcements: the id itself or the id
    /// followed by `/` and anything.
    public static func isRoute(_ routingID: Data, of worker: WorkerID) -> Bool {
        let id = Data(worker.rawValue.utf8)
        guard routingID.count >= id.count, routingID.prefix(id.count) == id else { return false }
        return routingID.count == id.count || routingID[routingID.startIndex + id.count] == UInt8(ascii: "/")
    }

    private static func hexDigits(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
