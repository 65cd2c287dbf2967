import ChimeRuntime
import HTTPServer
import ZeroMQ

/// What a coordinator service was made with and keeps for its whole life: the tunables its
/// state decides with, whether it starts as a standby, where it serves HTTP, the ZeroMQ
/// context it was given and the sounds directory named sounds are checked against.
struct ServiceSetup {
    /// The tunables the state decides with (with the shard map filled in).
    let tunables: CoordinatorConfiguration
    /// Whether to wait for the store lock instead of failing when another coordinator holds it.
    let isStandby: Bool
    /// Whether a standby keeps a warm copy of the state while it waits (`WarmStandby`).
    let isWarmStandby: Bool
    /// Where to serve HTTP; `nil` serves none.
    let httpAddress: HTTPListenAddress?
    /// The ZeroMQ context to open sockets in; `nil` makes one per `run` (in-process tests
    /// pass one, so their sockets reach the service over `inproc://`).
    let sharedContext: Context?
    /// The sounds directory named sounds are checked against (`nil`: none configured).
    let sounds: SoundLibrary?
}
