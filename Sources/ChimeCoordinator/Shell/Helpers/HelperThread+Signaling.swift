import Foundation
import HelperThreads
import ZeroMQ

extension HelperThread {
    /// Starts the thread as one of the coordinator's signalling helpers (journal writer,
    /// reply encoder, snapshot writer), which all wake the loop the same way: each owns a
    /// PUSH socket connected to the loop's inproc PULL endpoint and sends an empty message
    /// when it has something for it (ZeroMQ Guide ch. 2, "Signaling Between Threads").
    /// Connects that socket (linger 0) to `signalEndpoint` on the thread, runs `body` with
    /// it, then closes it.
    /// - Throws: `ZeroMQError` when the socket cannot be made or connected.
    func startSignaling(context: Context, signalEndpoint: String, body: @escaping @Sendable (Socket) -> Void) throws {
        try start {
            let signal = try Socket(.push, context: context)
            try signal.set(.linger(milliseconds: 0))
            try signal.connect(to: signalEndpoint)
            return signal
        } run: { signal in
            body(signal)
            signal.close()
        }
    }
}
