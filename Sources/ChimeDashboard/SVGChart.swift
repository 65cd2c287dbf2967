import Foundation

/// A line chart drawn as inline SVG (no script, no style attribute: the page's
/// Content-Security-Policy allows neither inline): a y axis labelled with its unit and
/// ticks at 0, half the maximum and the maximum; an x axis labelled "time (UTC)" with the
/// first, middle and last sample times as `HH:mm:ss` ticks; one polyline over the samples,
/// placed by time, with a gap where a value is missing. Every label is escaped.
public enum SVGChart {
    /// Chart size in CSS pixels.
    static let width = 360.0
    static let height = 150.0
    /// The plot area inside the chart, in CSS pixels: room on the left for the y labels,
    /// below for the x ticks and the axis title.
    static let plotLeft = 56.0
    static let plotRight = 352.0
    static let plotTop = 8.0
    static let plotBottom = 112.0

    /// One point of a chart: when (UTC) and the value (`nil` is a gap).
    public struct Point: Sendable, Hashable {
        /// When the value was sampled (UTC).
        public var at: Date
        /// The value in the chart's unit; `nil` or not finite is a gap.
        public var value: Double?

        /// Creates the value from its fields.
        public init(at: Date, value: Double?) {
            self.at = at
            self.value = value
        }
    }

    /// The chart of `points` (oldest first) titled `title`, its y axis labelled `unit`
    /// (`firings/s`, `ms`, `firings`).
    public static func render(title: String, unit: String, points: [Point]) -> HTML {
        let finite = points.compactMap(\.value).filter(\.isFinite)
        let maximum = finite.max() ?? 0
        // A flat zero line still needs a scale; the labels then read 0, 0.5, 1.
        let top = maximum > 0 ? maximum : 1
        let latest = points.last.flatMap(\.value).flatMap { $0.isFinite ? $0 : nil }
        let first = points.first?.at ?? Date(timeIntervalSince1970: 0)
        let span = max((points.last?.at ?? first).timeIntervalSince(first), 0)
        func x(_ at: Date) -> Double {
            guard span > 0 else { return plotLeft }
            return plotLeft + at.timeIntervalSince(first) / span * (plotRight - plotLeft)
        }
        func y(_ value: Double) -> Double { plotBottom - min(max(value / top, 0), 1) * (plotBottom - plotTop) }

        var segments: [[String]] = [[]]
        for point in points {
            guard let value = point.value, value.isFinite else {
                segments.append([])
                continue
            }
            segments[segments.count - 1].append(String(format: "%.1f,%.1f", x(point.at), y(value)))
        }
        let lines = segments.filter { !$0.isEmpty }.map { points -> HTML in
            // A lone sample between gaps is drawn as a dot, not lost.
            points.count == 1
                ? "<polyline class=\"line\" points=\"\(points[0]) \(points[0])\"/>"
                : "<polyline class=\"line\" points=\"\(points.joined(separator: " "))\"/>"
        }
        let yTicks = [0, top / 2, top].map { value -> HTML in
            let at = y(value)
            return """
                <line class="tick" x1="\(plotLeft - 4, digits: 1)" y1="\(at, digits: 1)" x2="\(plotLeft, digits: 1)" y2="\(at, digits: 1)"/>\
                <text class="tick-label" x="\(plotLeft - 6, digits: 1)" y="\(at + 4, digits: 1)" text-anchor="end">\(label(value))</text>
                """
        }
        let xTicks = tickTimes(points.map(\.at)).map { at -> HTML in
            let position = x(at)
            let anchor = position <= plotLeft + 1 ? "start" : position >= plotRight - 1 ? "end" : "middle"
            return """
                <line class="tick" x1="\(position, digits: 1)" y1="\(plotBottom, digits: 1)" x2="\(position, digits: 1)" y2="\(plotBottom + 4, digits: 1)"/>\
                <text class="tick-label" x="\(position, digits: 1)" y="\(plotBottom + 16, digits: 1)" text-anchor="\(anchor)">\(clock(at))</text>
                """
        }
        let middleY = (plotTop + plotBottom) / 2
        let latestText = latest.map { label($0) } ?? "-"
        return """
            <figure class="chart"><figcaption>\(title): \(latestText) \(unit) <span class="muted">(max \(label(maximum)))</span></figcaption>\
            <svg viewBox="0 0 \(Int(width)) \(Int(height))" width="\(Int(width))" height="\(Int(height))" role="img" aria-label="\(title) in \(unit) over time (UTC)">\
            <line class="axis" x1="\(plotLeft, digits: 1)" y1="\(plotTop, digits: 1)" x2="\(plotLeft, digits: 1)" y2="\(plotBottom, digits: 1)"/>\
            <line class="axis" x1="\(plotLeft, digits: 1)" y1="\(plotBottom, digits: 1)" x2="\(plotRight, digits: 1)" y2="\(plotBottom, digits: 1)"/>\
            \(yTicks)\(xTicks)\
            <text class="axis-label y-label" x="\(-middleY, digits: 1)" y="12" transform="rotate(-90)" text-anchor="middle">\(unit)</text>\
            <text class="axis-label x-label" x="\((plotLeft + plotRight) / 2, digits: 1)" y="\(height - 4, digits: 1)" text-anchor="middle">time (UTC)</text>\
            \(lines)</svg></figure>
            """
    }

    /// The x ticks: the first, middle and last instants (one when they are all the same).
    static func tickTimes(_ times: [Date]) -> [Date] {
        guard let first = times.first, let last = times.last else { return [] }
        guard last > first else { return [first] }
        return [first, first.addingTimeInterval(last.timeIntervalSince(first) / 2), last]
    }

    /// A tick value: whole numbers as they are, others with two decimals, large ones with
    /// a `k` or `M` suffix so the label fits left of the axis.
    static func label(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        let magnitude = abs(value)
        if magnitude >= 1_000_000 { return String(format: "%.1fM", value / 1_000_000) }
        if magnitude >= 10_000 { return String(format: "%.1fk", value / 1_000) }
        if value == value.rounded() { return String(format: "%.0f", value) }
        return String(format: "%.2f", value)
    }

    /// `HH:mm:ss` of `instant` in UTC.
    static func clock(_ instant: Date) -> String {
        let raw = instant.timeIntervalSince1970.rounded(.down)
        guard raw.isFinite, abs(raw) < 1e15 else { return "--:--:--" }
        let seconds = Int(raw)
        let inDay = ((seconds % 86_400) + 86_400) % 86_400
        return String(format: "%02d:%02d:%02d", inDay / 3600, inDay % 3600 / 60, inDay % 60)
    }
}
