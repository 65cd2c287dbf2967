internal import CZeroMQ

/// The version of the libzmq loaded at run time, such as `(4, 3, 4)` on Debian 12.
///
/// The corresponding libzmq call is `zmq_version`.
public var zeroMQVersion: (major: Int, minor: Int, patch: Int) {
    Calls.version()
}

/// Whether the loaded libzmq supports `capability`: a transport (`"ipc"`, `"tipc"`,
/// `"norm"`), a security mechanism (`"curve"`, `"gssapi"`) or `"draft"`.
///
/// The corresponding libzmq call is `zmq_has`.
public func zeroMQSupports(_ capability: String) -> Bool {
    Calls.has(capability)
}
