/// `rows` as lines of text columns (`ctl map`'s table), each column as wide as its widest cell
/// and two spaces from the next, the last column unpadded: nothing is cut, and no cell runs
/// into the next however long it is. Widths count characters (grapheme clusters).
public func alignedColumns(_ rows: [[String]]) -> [String] {
    let columnCount = rows.map(\.count).max() ?? 0
    let widths = (0..<columnCount).map { index in rows.map { index < $0.count ? $0[index].count : 0 }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { index, cell in
            guard index < row.count - 1 else { return cell }
            return cell + String(repeating: " ", count: widths[index] + 2 - cell.count)
        }.joined()
    }
}
