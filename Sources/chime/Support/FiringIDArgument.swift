import ChimeCore
import ChimeCommandLine

/// Parses a firing id given on the command line.
/// - Throws: `UsageError` (exit 2) when `text` is not `<reminderId>@YYYY-MM-DDTHH:MM:SS.mmmZ[#nag<n>]`.
func firingID(_ text: String) throws -> FiringID {
    guard let id = FiringID(text) else {
        throw UsageError("'\(text)' is not a firing id such as standup@2026-12-24T08:00:00.000Z (see 'chime delivered RECIPIENT')")
    }
    return id
}
