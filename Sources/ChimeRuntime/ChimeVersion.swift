/// Chime's version.
public enum ChimeVersion {
    /// The release string, `major.minor.patch`.
    public static let current = "0.1.0"
}
