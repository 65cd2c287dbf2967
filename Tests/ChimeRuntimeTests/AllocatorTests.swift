import Testing

@testable import ChimeRuntime

@Suite struct AllocatorTests {
    @Test func serviceSettingsAreOneArenaAndA4MiBMmapThreshold() {
        #expect(Allocator.serviceSettings.map(\.parameter) == [-8, -3])
        #expect(Allocator.serviceSettings.map(\.value) == [1, 4_194_304])
        #expect(Allocator.serviceSettings.map(\.description) == ["MALLOC_ARENA_MAX=1", "MALLOC_MMAP_THRESHOLD_=4194304"])
    }

    @Test(arguments: [
        ([String: String](), ["MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_"]),
        (["MALLOC_ARENA_MAX": "4"], ["MALLOC_MMAP_THRESHOLD_"]),
        (["MALLOC_MMAP_THRESHOLD_": "1048576", "PATH": "/bin"], ["MALLOC_ARENA_MAX"]),
        (["MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": ""], []),
    ])
    func anOperatorsEnvironmentVariableKeepsItsTunable(environment: [String: String], applied: [String]) {
        #expect(Allocator.settings(notOverriddenBy: environment).map(\.environmentName) == applied)
    }

    @Test func glibcAcceptsEverySetting() {
        #if canImport(Glibc)
        // The values a service applies; applying them again in the test process is harmless.
        #expect(Allocator.apply(Allocator.serviceSettings) == Allocator.serviceSettings)
        #else
        #expect(Allocator.apply(Allocator.serviceSettings).isEmpty)
        #endif
        Allocator.releaseFreePages()
    }
}
