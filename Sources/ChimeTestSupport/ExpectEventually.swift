import Foundation

/// A wait that ran out of time.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What was awaited.
    public var what: String
    /// How long the wait lasted, in seconds.
    public var seconds: Double
    /// Creates the value from its fields (see each property for meaning and units).
    public init(what: String, seconds: Double) {
        self.what = what
        self.seconds = seconds
    }
    public var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// Polls `condition` every `interval` seconds until it returns true.
/// - Parameters:
///   - timeout: the deadline, in seconds.
///   - what: a description for the error.
/// - Throws: `DeadlineExceeded` when the deadline passes; errors from `condition`.
public func expectEventually(
    timeout: Double, interval: Double = 0.02, _ what: String, _ condition: () throws -> Bool
) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() >= deadline { throw DeadlineExceeded(what: what, seconds: timeout) }
        Thread.sleep(forTimeInterval: interval)
    }
}
