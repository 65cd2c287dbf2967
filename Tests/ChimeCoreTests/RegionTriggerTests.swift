import ChimeCore
import Foundation
import Testing

/// Region triggers, pure: geodesic distance, presence with hysteresis, crossings (entry,
/// exit, both, once, a jittering edge, the first determination), the region index.
@Suite struct RegionTriggerTests {
    static let center = GeoPoint(latitude: 52.52, longitude: 13.405)

    /// `meters` north of the centre (a degree of latitude is about 111.2 km there).
    static func north(_ meters: Double) -> GeoPoint {
        GeoPoint(latitude: center.latitude + meters / 111_250, longitude: center.longitude)
    }

    @Test func geodesicDistancesMatchPublishedValues() {
        // Vincenty's 1975 test line: Flinders Peak to Buninyong, 54,972.271 m on WGS-84.
        let flinders = GeoPoint(latitude: -(37 + 57 / 60.0 + 3.72030 / 3600), longitude: 144 + 25 / 60.0 + 29.52440 / 3600)
        let buninyong = GeoPoint(latitude: -(37 + 39 / 60.0 + 10.15610 / 3600), longitude: 143 + 55 / 60.0 + 35.38390 / 3600)
        #expect(abs(flinders.distance(to: buninyong) - 54_972.271) < 0.01)
        #expect(Self.center.distance(to: Self.center) == 0)
        // Nearly antipodal: the haversine fallback, within 0.5 %.
        let antipode = GeoPoint(latitude: -52.52, longitude: 13.405 - 180 + 0.0001)
        let distance = Self.center.distance(to: antipode)
        #expect(abs(distance - 20_003_931) / 20_003_931 < 0.005)
    }

    /// One table: the previous presence, the report's distance from the centre and accuracy,
    /// and the presence and crossing that follow (radius 100 m).
    @Test(arguments: [
        (RegionPresence?.none, 50.0, 0.0, RegionPresence?.some(.inside), RegionCrossing?.none),  // first report: no crossing
        (.some(.outside), 50, 0, .some(.inside), .some(.entry)),
        (.some(.inside), 150, 0, .some(.outside), .some(.exit)),
        (.some(.outside), 99, 0, .some(.inside), .some(.entry)),
        (.some(.outside), 95, 10, .some(.outside), .none),  // within the accuracy of the edge: stays
        (.some(.inside), 105, 10, .some(.inside), .none),
        (.some(.inside), 111, 10, .some(.outside), .some(.exit)),
        (.some(.outside), 89, 10, .some(.inside), .some(.entry)),
        (.some(.outside), 60, 500, .some(.outside), .none),  // margin at most half the radius: 50 m
        (.some(.outside), 49, 500, .some(.inside), .some(.entry)),
        (.none, 100, 10, .none, .none),  // undetermined at the edge stays undetermined
    ])
    func presenceAndCrossings(previous: RegionPresence?, distance: Double, accuracy: Double, presence: RegionPresence?, crossing: RegionCrossing?) {
        let region = RegionTrigger(center: Self.center, radius: 100)
        let now = region.presence(at: Self.north(distance), accuracy: accuracy, previous: previous)
        #expect(now == presence)
        #expect(RegionTrigger.crossing(from: previous, to: now) == crossing)
    }

    @Test func reportsJitteringAroundTheEdgeCrossOnceEachWay() {
        let region = RegionTrigger(center: Self.center, radius: 100)
        var presence: RegionPresence? = .outside
        var crossings: [RegionCrossing] = []
        // Walking in with ±8 m of jitter at 20 m accuracy, then out again.
        let path: [Double] = [140, 125, 108, 93, 104, 96, 85, 70, 50, 88, 103, 96, 112, 99, 121, 140]
        for distance in path {
            let next = region.presence(at: Self.north(distance), accuracy: 20, previous: presence)
            if let crossing = RegionTrigger.crossing(from: presence, to: next) { crossings.append(crossing) }
            presence = next
        }
        #expect(crossings == [.entry, .exit])
    }

    @Test func entryExitBothAndOnceAreTheRegionsChoice() throws {
        let entryOnly = RegionTrigger(center: Self.center, radius: 100, notifyOnEntry: true, notifyOnExit: false)
        #expect(entryOnly.fires(on: .entry) && !entryOnly.fires(on: .exit))
        let exitOnly = RegionTrigger(center: Self.center, radius: 100, notifyOnEntry: false, notifyOnExit: true)
        #expect(!exitOnly.fires(on: .entry) && exitOnly.fires(on: .exit))
        let both = RegionTrigger(center: Self.center, radius: 100)
        #expect(both.fires(on: .entry) && both.fires(on: .exit) && both.triggersOnce)
        let json = #"{"region":{"latitude":52.52,"longitude":13.405,"radius":150,"notifyOnExit":false,"triggersOnce":false}}"#
        let trigger = try JSONDecoder().decode(Trigger.self, from: Data(json.utf8))
        #expect(trigger.region == RegionTrigger(center: Self.center, radius: 150, notifyOnExit: false, triggersOnce: false))
        #expect(try JSONDecoder().decode(Trigger.self, from: try JSONEncoder().encode(trigger)) == trigger)
        #expect(try trigger.makeRecurrence().firstOccurrence(onOrAfter: Date()) == nil, "no time occurrences")
        let reminder = Reminder(id: "r", recipient: "u", content: Content(), trigger: trigger)
        #expect(try Reminder(binary: reminder.binaryEncoded()) == reminder)
        for bad in [
            RegionTrigger(center: Self.center, radius: 0), RegionTrigger(center: GeoPoint(latitude: 91, longitude: 0), radius: 10),
            RegionTrigger(center: Self.center, radius: 10, notifyOnEntry: false, notifyOnExit: false),
        ] {
            #expect(throws: ValidationError.self) { try Trigger(start: .instant(Trigger.unstarted), region: bad).makeRecurrence() }
        }
    }

    @Test func theIndexFindsEveryRegionHoldingAPointAndFewOthers() {
        var index = RegionIndex<String, Int>()
        var generator = SystemRandomNumberGenerator()
        var regions: [(GeoPoint, Double)] = []
        for key in 0..<3_000 {
            // Mostly city-sized regions around Berlin, some anywhere, some near the poles and
            // the antimeridian, radii 10 m to 100 km.
            let anywhere = key % 10 == 0
            let latitude = anywhere ? Double.random(in: -89.9...89.9, using: &generator) : 52.5 + Double.random(in: -0.2...0.2, using: &generator)
            let longitude = anywhere ? Double.random(in: -180...180, using: &generator) : 13.4 + Double.random(in: -0.3...0.3, using: &generator)
            let radius = pow(10, Double.random(in: 1...5, using: &generator))
            let center = GeoPoint(latitude: latitude, longitude: longitude)
            regions.append((center, radius))
            index.insert(key, in: "alice", center: center, radius: radius)
        }
        index.insert(99_999, in: "bob", center: Self.center, radius: 1_000)
        #expect(index.count == 3_001)
        var totalCandidates = 0
        var totalContaining = 0
        for _ in 0..<500 {
            let point = Bool.random(using: &generator)
                ? GeoPoint(latitude: 52.5 + Double.random(in: -0.25...0.25, using: &generator), longitude: 13.4 + Double.random(in: -0.35...0.35, using: &generator))
                : GeoPoint(latitude: Double.random(in: -90...90, using: &generator), longitude: Double.random(in: -180...180, using: &generator))
            let candidates = Set(index.candidates(near: point, in: "alice"))
            totalCandidates += candidates.count
            for (key, region) in regions.enumerated() where region.0.distance(to: point) <= region.1 {
                totalContaining += 1
                #expect(candidates.contains(key), "region \(key) holds \(point) but is not a candidate")
            }
            #expect(!candidates.contains(99_999), "another partition's region")
        }
        // A candidate's cell is at most twice its box: a few times the regions that hold the point.
        #expect(totalCandidates < 4 * totalContaining + 500 * 10, "a query reads the point's cells, not every region")
        #expect(totalCandidates / 500 < 1_000)
        index.remove(7)
        #expect(!index.candidates(near: regions[7].0, in: "alice").contains(7))
        #expect(index.count == 3_000)
    }
}
