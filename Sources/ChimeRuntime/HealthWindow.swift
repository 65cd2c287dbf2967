/// How long a service's loop may go without starting a turn before its `/healthz` answers 503
/// (a Kubernetes liveness probe or systemd's watchdog then restarts the process): 5 seconds.
public enum HealthWindow {
    /// The window, in seconds.
    public static let seconds = 5.0
}
