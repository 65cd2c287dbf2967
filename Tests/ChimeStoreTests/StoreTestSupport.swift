import ChimeStore
import Foundation
import Testing

/// Varied records (31 to 131 bytes), deterministic for a given index; one in ten an epoch.
func makeEntries(_ count: Int, from first: Int = 0) -> [TestRecord] {
    (first..<(first + count)).map { index in
        if index % 10 == 7 { return .epoch(UInt64(index)) }
        return .data(Array("record-\(index):".utf8) + Array(repeating: UInt8(ascii: "a") + UInt8(index % 26), count: 20 + (index * 7) % 100))
    }
}

/// Opens the journal in `directory` and returns every entry with its sequence number.
func replayAll(
    _ directory: URL, fsync: FsyncPolicy = .never, segmentSize: Int = FileJournal.defaultSegmentSize
) throws -> (journal: FileJournal, report: JournalOpenReport, entries: [(UInt64, TestRecord)]) {
    var entries: [(UInt64, TestRecord)] = []
    let (journal, report) = try FileJournal.open(directory: directory, fsync: fsync, segmentSize: segmentSize, codec: testCodec) {
        entries.append(($0, $1))
    }
    return (journal, report, entries)
}

/// The segment files of a journal directory, oldest first.
func segmentPaths(_ directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path)
        .filter { $0.hasSuffix(".log") }
        .sorted()
        .map { directory.appendingPathComponent($0).path }
}

/// The good records of a segment file.
func records(ofSegment path: String) throws -> [RecordReader.Record] {
    var reader = RecordReader(
        bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), startingAt: RecordFraming.segmentHeaderLength)
    var records: [RecordReader.Record] = []
    while let record = reader.next() { records.append(record) }
    return records
}

func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
}

func truncate(_ path: String, to length: Int) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.truncate(atOffset: UInt64(length))
    try handle.close()
}

func appendBytes(_ bytes: [UInt8], to path: String) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
}

func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
    var data = try Data(contentsOf: URL(fileURLWithPath: path))
    data.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    try data.write(to: URL(fileURLWithPath: path))
}

func flipByte(_ path: String, at offset: Int) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    try overwrite(path, at: offset, with: [data[offset] ^ 0x5A])
}

/// Every regular file under `directory` with its bytes, by relative path: equal before and
/// after an operation means the operation changed nothing.
func contentsOfTree(_ directory: URL) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: directory.path)
    while let relative = enumerator?.nextObject() as? String {
        // LEASE is the holder's heartbeat: every open rewrites it, and each renewal (every
        // 250 ms) counts up, so an open that takes longer on a loaded machine writes a higher
        // count. It holds no data; a CI run failed on it.
        if relative == "LEASE" { continue }
        let url = directory.appendingPathComponent(relative)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            contents[relative] = try Data(contentsOf: url)
        }
    }
    return contents
}

/// Expects `body` to throw a `JournalError` with `code`, and returns it.
@discardableResult
func expectJournalError<T>(
    _ code: JournalError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> JournalError? {
    do {
        _ = try body()
        Issue.record("expected JournalError \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as JournalError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected JournalError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension Array {
    /// The one element, or `nil` when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
