import Foundation

/// A line chart drawn as inline SVG (no script, no style attribute: the page's
/// Content-Security-Policy allows neither inline): one polyline over the samples, a gap
/// where a value is missing, the latest value and the maximum as text.
public enum SVGChart {
    /// Chart size in CSS pixels.
    static let width = 320.0
    static let height = 80.0

    /// The chart of `values` (oldest first; `nil` is a gap) titled `title`, in `unit`.
    public static func render(title: String, unit: String, values: [Double?]) -> HTML {
        let finite = values.compactMap { $0 }.filter(\.isFinite)
        let top = max(finite.max() ?? 0, 1e-9)
        let latest = values.last.flatMap { $0 }
        var segments: [String] = []
        var current: [String] = []
        let step = values.count > 1 ? width / Double(values.count - 1) : 0
        for (index, value) in values.enumerated() {
            guard let value, value.isFinite else {
                if current.count > 1 { segments.append(current.joined(separator: " ")) }
                current = []
                continue
            }
            let x = Double(index) * step
            let y = height - 4 - (value / top) * (height - 12)
            current.append(String(format: "%.1f,%.1f", x, y))
        }
        if current.count > 1 { segments.append(current.joined(separator: " ")) }
        let lines = segments.map { points -> HTML in "<polyline class=\"line\" points=\"\(points)\"/>" }
        let latestText = latest.map { String(format: "%.2f", $0) } ?? "-"
        return """
            <figure class="chart"><figcaption>\(title): \(latestText) \(unit) <span class="muted">(max \(top == 1e-9 ? 0 : top, digits: 2))</span></figcaption>\
            <svg viewBox="0 0 \(Int(width)) \(Int(height))" width="\(Int(width))" height="\(Int(height))" role="img" aria-label="\(title)">\
            <rect class="frame" x="0" y="0" width="\(Int(width))" height="\(Int(height))"/>\(lines)</svg></figure>
            """
    }
}
