extension ControlRequest {
    /// Whether the request changes the schedule or a recipient (`schedule`, `cancel`,
    /// `retry`, `register`, `badge`, `ack`, `enable`, `disable`, `act`, and `delivered`
    /// with `remove`): such a request is journaled, answered once its entries are durable,
    /// and, with a `requestId`, applied once however often it is retried.
    public var isMutating: Bool {
        switch operation {
        case .schedule, .cancel, .retry, .deleteDeadLetter, .register, .badge, .ack, .enable, .disable, .act, .destinations: true
        case .triggerNow, .backfill, .remaining, .locate, .setCalendar, .deleteCalendar: true
        case .delivered: command.isDeliveredRemoval
        default: false
        }
    }
}
