import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The checks OpenSSH applies to `~/.ssh` (`StrictModes`, sshd_config(5)), applied to a key
/// directory before its allow-lists are believed: the directory and everything in it owned by
/// the user the coordinator runs as or by root, writable by no group and no other user, and
/// no symbolic link that leads out of it (Kubernetes' Secret volumes link `..data` inside the
/// volume, which passes).
///
/// Run at start and on every SIGHUP; a failure leaves the allow-lists in force unchanged.
enum KeyDirectoryTrust {
    /// Checks `directory` and every file and folder under it (one level of role folders).
    /// - Throws: `SecurityError(.loosePermissions)` naming the first path that fails and why.
    static func check(_ directory: URL) throws(SecurityError) {
        let root = directory.resolvingSymlinksInPath().path
        try checkOwnerAndMode(root, shownAs: directory.path)
        for entry in try listing(root) {
            let path = root + "/" + entry
            let target = try insideTarget(of: path, root: root)
            try checkOwnerAndMode(target, shownAs: path)
            if isDirectory(target) {
                for child in try listing(target) {
                    let childPath = path + "/" + child
                    try checkOwnerAndMode(try insideTarget(of: target + "/" + child, root: root), shownAs: childPath)
                }
            }
        }
    }

    /// Where `path` leads: itself, or for a symbolic link its resolved target, which must lie
    /// inside `root`.
    private static func insideTarget(of path: String, root: String) throws(SecurityError) -> String {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            throw SecurityError(.loosePermissions, "\(path): cannot read it (\(String(cString: strerror(errno))))")
        }
        guard status.st_mode & S_IFMT == S_IFLNK else { return path }
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard target == root || target.hasPrefix(root + "/") else {
            throw SecurityError(
                .loosePermissions, "\(path) is a symbolic link to \(target), outside the key directory \(root); copy the file in instead")
        }
        return target
    }

    private static func checkOwnerAndMode(_ path: String, shownAs shown: String) throws(SecurityError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw SecurityError(.loosePermissions, "\(shown): cannot read it (\(String(cString: strerror(errno))))")
        }
        let owner = status.st_uid
        guard owner == geteuid() || owner == 0 else {
            throw SecurityError(
                .loosePermissions,
                "\(shown) is owned by uid \(owner), not by this user (uid \(geteuid())) or root: that user could change who is allowed in")
        }
        let mode = Int(status.st_mode & 0o7777)
        guard mode & 0o022 == 0 else {
            throw SecurityError(
                .loosePermissions,
                "\(shown) has mode \(String(mode, radix: 8)): group or others could change who is allowed in (chmod go-w \(shown))")
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    private static func listing(_ path: String) throws(SecurityError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        } catch {
            throw SecurityError(.loosePermissions, "\(path): cannot list it")
        }
    }
}
