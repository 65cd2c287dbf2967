internal import CZeroMQ

/// An opaque libzmq context or socket pointer.
typealias Handle = UnsafeMutableRawPointer

/// One function per libzmq call, and the only place that reads `zmq_errno()`.
///
/// Every wrapper retries on `EINTR`, reports `EAGAIN` as `nil`/`false` where the call can
/// would-block, and throws ``ZeroMQError`` for anything else. `ENOTSOCK` and `EFAULT` mean a
/// closed or foreign handle reached libzmq, which only a bug in this module can cause, so
/// they trap.
enum Calls {
    // MARK: Contexts

    static func contextNew() throws -> Handle {
        guard let context = zmq_ctx_new() else {
            throw error(zmq_errno(), "zmq_ctx_new")
        }
        return context
    }

    static func contextSet(_ context: Handle, option: Int32, value: Int32) throws {
        try perform("zmq_ctx_set") { zmq_ctx_set(context, option, value) }
    }

    static func contextShutdown(_ context: Handle) {
        // zmq_ctx_shutdown fails only with EFAULT (an invalid context), which `error` traps on.
        guard zmq_ctx_shutdown(context) == 0 else {
            preconditionFailure("\(error(zmq_errno(), "zmq_ctx_shutdown"))")
        }
    }

    static func contextTerm(_ context: Handle) {
        while zmq_ctx_term(context) != 0 {
            let code = zmq_errno()
            guard code == EINTR else {
                preconditionFailure("\(error(code, "zmq_ctx_term"))")
            }
        }
    }

    // MARK: Sockets

    static func socket(_ context: Handle, type: Int32) throws -> Handle {
        guard let socket = zmq_socket(context, type) else {
            throw error(zmq_errno(), "zmq_socket")
        }
        return socket
    }

    static func close(_ socket: Handle) {
        guard zmq_close(socket) == 0 else {
            preconditionFailure("\(error(zmq_errno(), "zmq_close"))")
        }
    }

    static func bind(_ socket: Handle, to endpoint: String) throws {
        try perform("zmq_bind", endpoint: endpoint) { zmq_bind(socket, endpoint) }
    }

    static func connect(_ socket: Handle, to endpoint: String) throws {
        try perform("zmq_connect", endpoint: endpoint) { zmq_connect(socket, endpoint) }
    }

    static func unbind(_ socket: Handle, from endpoint: String) throws {
        try perform("zmq_unbind", endpoint: endpoint) { zmq_unbind(socket, endpoint) }
    }

    static func disconnect(_ socket: Handle, from endpoint: String) throws {
        try perform("zmq_disconnect", endpoint: endpoint) { zmq_disconnect(socket, endpoint) }
    }

    // MARK: Options

    static func setOption(
        _ socket: Handle, _ option: Int32, named name: String, bytes: UnsafeRawBufferPointer
    ) throws {
        try perform("zmq_setsockopt \(name)") {
            zmq_setsockopt(socket, option, bytes.baseAddress, bytes.count)
        }
    }

    /// Reads an option into `buffer` and returns how many bytes libzmq wrote.
    static func option(
        _ socket: Handle, _ option: Int32, named name: String, into buffer: UnsafeMutableRawBufferPointer
    ) throws -> Int {
        var size = buffer.count
        try perform("zmq_getsockopt \(name)") {
            zmq_getsockopt(socket, option, buffer.baseAddress, &size)
        }
        return size
    }

    static func intOption(_ socket: Handle, _ option: Int32, named name: String) throws -> Int32 {
        var value: Int32 = 0
        _ = try withUnsafeMutableBytes(of: &value) { buffer in
            try Calls.option(socket, option, named: name, into: buffer)
        }
        return value
    }

    // MARK: Messages

    /// Sends one frame; returns `false` when libzmq reports `EAGAIN`.
    static func send(_ socket: Handle, bytes: UnsafeRawBufferPointer, flags: Int32) throws -> Bool {
        try attempt("zmq_send") { zmq_send(socket, bytes.baseAddress, bytes.count, flags) } != nil
    }

    /// Runs `body` with an initialised message that is closed afterwards.
    static func withMessage<Result>(
        _ body: (UnsafeMutablePointer<zmq_msg_t>) throws -> Result
    ) rethrows -> Result {
        var message = zmq_msg_t()
        // The pointer must stay stable from init to close: small frames live inside the struct.
        return try withUnsafeMutablePointer(to: &message) { pointer in
            // zmq_msg_init cannot fail.
            zmq_msg_init(pointer)
            defer { zmq_msg_close(pointer) }
            return try body(pointer)
        }
    }

    /// Receives one frame into `message`; returns `false` when libzmq reports `EAGAIN`.
    static func messageReceive(
        _ message: UnsafeMutablePointer<zmq_msg_t>, from socket: Handle, flags: Int32
    ) throws -> Bool {
        try attempt("zmq_msg_recv") { zmq_msg_recv(message, socket, flags) } != nil
    }

    /// The bytes of a received message, valid until the message is reused or closed.
    static func messageBytes(_ message: UnsafeMutablePointer<zmq_msg_t>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: zmq_msg_data(message), count: zmq_msg_size(message))
    }

    /// A metadata property of a received message (`"User-Id"`, `"Peer-Address"`, `"Socket-Type"`),
    /// or `nil` when the connection did not set it.
    static func messageProperty(_ message: UnsafeMutablePointer<zmq_msg_t>, named name: String) -> String? {
        // zmq_msg_gets fails only with EINVAL, for a property the message does not carry.
        guard let value = zmq_msg_gets(message, name) else { return nil }
        return String(cString: value)
    }

    static func messageHasMore(_ message: UnsafeMutablePointer<zmq_msg_t>) -> Bool {
        zmq_msg_more(message) != 0
    }

    // MARK: Polling and proxies

    /// Polls until an item is ready or `deadline` passes (`nil` waits forever).
    ///
    /// zmq_poll counts whole milliseconds on its own clock and may wake just before our
    /// deadline, and `EINTR` cuts the wait short, so both cases poll again for the rest.
    static func poll(
        _ items: UnsafeMutableBufferPointer<zmq_pollitem_t>, until deadline: ContinuousClock.Instant?
    ) throws -> Int {
        let clock = ContinuousClock()
        while true {
            let timeout = deadline.map { milliseconds(roundingUp: clock.now.duration(to: $0)) } ?? -1
            let ready = zmq_poll(items.baseAddress, Int32(items.count), timeout)
            if ready > 0 {
                return Int(ready)
            }
            if ready == 0 {
                guard let deadline, clock.now < deadline else { return 0 }
                continue
            }
            let code = zmq_errno()
            guard code == EINTR else { throw error(code, "zmq_poll") }
        }
    }

    static func socketMonitor(_ socket: Handle, endpoint: String, events: Int32) throws {
        try perform("zmq_socket_monitor", endpoint: endpoint) { zmq_socket_monitor(socket, endpoint, events) }
    }

    static func proxy(frontend: Handle, backend: Handle, capture: Handle?) throws {
        try perform("zmq_proxy") { zmq_proxy(frontend, backend, capture) }
    }

    static func proxySteerable(frontend: Handle, backend: Handle, capture: Handle?, control: Handle) throws {
        try perform("zmq_proxy_steerable") { zmq_proxy_steerable(frontend, backend, capture, control) }
    }

    // MARK: Library

    static func curveKeypair() throws -> (publicKey: String, secretKey: String) {
        // Z85 keys are 40 characters plus a terminating NUL.
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        try perform("zmq_curve_keypair") { zmq_curve_keypair(&publicKey, &secretKey) }
        return (string(fromNULTerminated: publicKey), string(fromNULTerminated: secretKey))
    }

    /// The Z85 public key of a Z85 secret key.
    static func curvePublic(secretKey: String) throws -> String {
        var publicKey = [CChar](repeating: 0, count: 41)
        try perform("zmq_curve_public") { zmq_curve_public(&publicKey, secretKey) }
        return string(fromNULTerminated: publicKey)
    }

    /// Z85 text of `bytes`, whose count must be a multiple of 4; `nil` otherwise.
    static func z85Encode(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count % 4 == 0 else { return nil }
        var text = [CChar](repeating: 0, count: bytes.count / 4 * 5 + 1)
        guard zmq_z85_encode(&text, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) != nil else {
            return nil
        }
        return string(fromNULTerminated: text)
    }

    /// The bytes of Z85 `text`, whose length must be a multiple of 5; `nil` when it is not Z85.
    static func z85Decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        // Checked here too: older libzmq builds index their table with any byte.
        guard characters.count % 5 == 0, characters.allSatisfy(z85Alphabet.contains) else { return nil }
        var bytes = [UInt8](repeating: 0, count: characters.count / 5 * 4)
        guard zmq_z85_decode(&bytes, text) != nil else { return nil }
        return bytes
    }

    /// The 85 characters of Z85 (ZeroMQ RFC 32).
    static let z85Alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    static func version() -> (major: Int, minor: Int, patch: Int) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }

    static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }

    static func errorMessage(_ code: Int32) -> String {
        String(cString: zmq_strerror(code))
    }

    // MARK: Helpers

    /// Runs a call that returns -1 on failure, retrying on `EINTR`; `EAGAIN` throws.
    @discardableResult
    private static func perform(
        _ operation: String, endpoint: String? = nil, _ call: () -> Int32
    ) throws -> Int32 {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = zmq_errno()
            if code != EINTR { throw error(code, operation, endpoint: endpoint) }
        }
    }

    /// Runs a call that may would-block, retrying on `EINTR`; `EAGAIN` returns `nil`.
    private static func attempt(_ operation: String, _ call: () -> Int32) throws -> Int32? {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = zmq_errno()
            if code == EAGAIN { return nil }
            if code != EINTR { throw error(code, operation) }
        }
    }

    private static func error(_ code: Int32, _ operation: String, endpoint: String? = nil) -> ZeroMQError {
        let error = ZeroMQError(code: ZeroMQError.Code(rawValue: code), operation: operation, endpoint: endpoint)
        precondition(
            code != ENOTSOCK && code != EFAULT,
            "\(error) — a closed or invalid handle reached libzmq, a bug in the ZeroMQ module or a socket used after close()"
        )
        return error
    }

    private static func string(fromNULTerminated characters: [CChar]) -> String {
        let bytes = characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Converts a wait to whole milliseconds, rounding up so a poll never ends early.
    static func milliseconds(roundingUp duration: Duration) -> Int {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return Int.max }
        let partial = (attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond
        let (total, sumOverflow) = whole.addingReportingOverflow(partial)
        return sumOverflow ? Int.max : Int(total)
    }
}
