/// "Did you mean" for mistyped command and option names.
public enum Suggestions {
    /// The candidate closest to `word` by Damerau–Levenshtein distance (optimal string
    /// alignment: insertions, deletions, substitutions and adjacent swaps each cost 1), when
    /// that distance is at most 2 and below `word`'s length; ties go to the earlier candidate.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            if distance <= 2, distance < word.count, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// ` (did you mean 'schedule'?)`, or an empty string without a close candidate.
    public static func hint(for word: String, among candidates: [String], prefix: String = "") -> String {
        closest(to: word, among: candidates).map { " (did you mean '\(prefix)\($0)'?)" } ?? ""
    }

    /// The optimal-string-alignment distance between `a` and `b` (Damerau 1964, Wagner–Fischer table).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
