/// A value its owner derives from what it holds — a cache, an index, a count or an arrival
/// number — kept beside it so reads are fast, rebuilt by a snapshot load or a slice, and left
/// out of equality: every `Derived` is equal to every other. An owner marks such a property
/// `@Derived` and synthesizes `==` over the rest, so a state rebuilt from a snapshot and the
/// journal equals the live one whatever its caches hold (`CrashEquivalenceTests`).
@propertyWrapper
struct Derived<Value> {
    var wrappedValue: Value

    init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
}

extension Derived: Equatable {
    /// Always `true`: what is derived says nothing about the value that owns it.
    static func == (lhs: Derived, rhs: Derived) -> Bool { true }
}

extension Derived: Sendable where Value: Sendable {}
