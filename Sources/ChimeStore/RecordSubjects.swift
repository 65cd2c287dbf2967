/// What journal records are about, by id and kind, as text: what a report of damage names
/// (``JournalLoss``). The store keeps and prints them; the ``JournalRecordCodec`` decides
/// what the kinds are.
public struct RecordSubjects: Hashable, Sendable {
    /// A kind of id, such as the reminders a record names.
    public struct Kind: Hashable, Sendable {
        /// Its stable name, a key in `chime store verify --json` (`reminders`).
        public var name: String
        /// How a line for people introduces the ids (`requests (a retry is applied anew)`).
        public var label: String

        /// A kind whose label is `label` (its name when `nil`).
        public init(name: String, label: String? = nil) {
            self.name = name
            self.label = label ?? name
        }
    }

    /// The kinds, in the order their lines are printed.
    public private(set) var kinds: [Kind] = []
    private var idsByName: [String: Set<String>] = [:]

    /// No ids; `kinds` fixes the order lines name them in.
    public init(kinds: [Kind] = []) {
        self.kinds = kinds
        for kind in kinds { idsByName[kind.name] = [] }
    }

    /// The ids of the kind named `name` (empty when none).
    public subscript(name: String) -> Set<String> { idsByName[name] ?? [] }

    /// Whether no id is named.
    public var isEmpty: Bool { idsByName.values.allSatisfy(\.isEmpty) }

    /// Adds `ids` as ids of `kind`.
    public mutating func insert<S: Sequence>(_ ids: S, as kind: Kind) where S.Element == String {
        if idsByName[kind.name] == nil {
            kinds.append(kind)
            idsByName[kind.name] = []
        }
        idsByName[kind.name, default: []].formUnion(ids)
    }

    /// Adds every id of `other`.
    public mutating func formUnion(_ other: RecordSubjects) {
        for kind in other.kinds { insert(other[kind.name], as: kind) }
    }
}
