import ChimeCommandLine
import Foundation
import Testing

@Suite struct JSONLineTests {
    @Test func keysAreSortedAndSlashesKept() {
        #expect(jsonLine(["b": 1, "a": "x/y"]) == #"{"a":"x/y","b":1}"#)
    }

    /// A figure that is not a number (a rate over an empty window) never stops the command.
    @Test func numbersJSONCannotSpellAreNull() {
        let line = jsonLine(["rate": Double.nan, "rows": [["max": Double.infinity, "p50": 1.5]]])
        #expect(line == #"{"rate":null,"rows":[{"max":null,"p50":1.5}]}"#)
    }
}
