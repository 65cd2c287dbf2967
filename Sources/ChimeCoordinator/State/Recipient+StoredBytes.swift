import ChimeCore
import Foundation

extension Recipient {
    /// The bytes of the registration as the coordinator keeps it: its JSON, the form the
    /// snapshot stores and a `.registered` journal entry wraps (tokens and secrets included,
    /// unredacted). What a restricted key's byte quota counts for it (``TenantUsage``).
    var storedBytes: Int {
        // Encoding fails only for a non-finite number, which `validate()` refuses and the
        // journal could not store either: counted as nothing, never a crash.
        (try? Self.sizingEncoder.encode(self))?.count ?? 0
    }

    /// One encoder for every measure (making one costs more than the encoding).
    private static let sizingEncoder = JSONEncoder()
}
