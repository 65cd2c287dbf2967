import Foundation

// One binary, several targets: `CHIME_FUZZ_TARGET` names the target (see `FuzzTarget`).
// With `CHIME_FUZZ_WRITE_SEEDS=<dir>` it writes the generated binary seeds and exits.

private let selectedTarget: FuzzTarget = {
    guard let name = ProcessInfo.processInfo.environment["CHIME_FUZZ_TARGET"], let target = FuzzTarget(rawValue: name)
    else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("set CHIME_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>>>) -> CInt {
    if let directory = ProcessInfo.processInfo.environment["CHIME_FUZZ_WRITE_SEEDS"] {
        do {
            try SeedWriter.write(into: URL(fileURLWithPath: directory))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("writing seeds failed: \(error)\n".utf8))
            exit(1)
        }
    }
    _ = selectedTarget
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: size))
    selectedTarget.run(bytes)
    return 0
}
