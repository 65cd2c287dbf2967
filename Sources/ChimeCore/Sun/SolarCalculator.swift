import Foundation

/// When the sun crosses a given zenith at a place on a day: the NOAA solar calculator's
/// algorithm (NOAA Global Monitoring Laboratory, "Solar Calculation Details", after Jean
/// Meeus, *Astronomical Algorithms*), computed as the `astral` package (3.x) computes it, which
/// the tests use as the reference: the sun's declination and the equation of time at the
/// Julian century of the event, the hour angle of the zenith (apparent radius and atmospheric
/// refraction added for the horizon), two passes so the second evaluates the sun at the
/// event's own time. Accurate to about a minute between the polar circles.
public enum SolarCalculator {
    /// The sun's apparent radius in degrees (16′), added to 90° for sunrise and sunset.
    public static let apparentRadius = 32.0 / 120.0

    /// The zenith of an event with its refraction: sunrise/sunset 90° + 16′, dawn/dusk
    /// 90° + the depression, each plus the refraction at that elevation.
    static func zenith(depression: Double?) -> Double {
        let zenith = 90 + (depression ?? apparentRadius)
        return zenith + refraction(atZenith: zenith)
    }

    /// Atmospheric refraction in degrees at a zenith angle (NOAA's piecewise fit).
    static func refraction(atZenith zenith: Double) -> Double {
        let elevation = 90 - zenith
        if elevation >= 85 { return 0 }
        let te = tan(radians(elevation))
        let seconds: Double
        if elevation > 5 {
            seconds = 58.1 / te - 0.07 / (te * te * te) + 0.000086 / (te * te * te * te * te)
        } else if elevation > -0.575 {
            seconds = 1735 + elevation * (-518.2 + elevation * (103.4 + elevation * (-12.79 + elevation * 0.711)))
        } else {
            seconds = -20.774 / te
        }
        return seconds / 3600
    }

    /// The instant the sun crosses `zenith` (degrees, refraction included) rising or setting
    /// at `latitude`/`longitude` (degrees, north and east positive), for the UTC day `day`
    /// (days since 1970-01-01): minutes from that day's 0h UTC, not wrapped into the day, so
    /// consecutive days give instants about 24 h apart at any longitude. `nil` when the sun
    /// does not reach the zenith that day (polar day or night).
    public static func crossing(day: Int, latitude: Double, longitude: Double, zenith: Double, rising: Bool) -> Double? {
        let latitude = min(max(latitude, -89.8), 89.8)
        let julianDay = Double(day) + 2_440_587.5
        var minutes = 720.0
        var adjustment = 0.0
        for _ in 0..<2 {
            let century = (julianDay + adjustment - 2_451_545.0) / 36_525.0
            let declination = sunDeclination(century)
            let cosine = (cos(radians(zenith)) - sin(radians(latitude)) * sin(radians(declination)))
                / (cos(radians(latitude)) * cos(radians(declination)))
            guard cosine >= -1, cosine <= 1 else { return nil }
            let hourAngle = degrees(acos(cosine)) * (rising ? 1 : -1)
            minutes = 720 + (-longitude - hourAngle) * 4 - equationOfTime(century)
            adjustment = minutes / 1440
        }
        return minutes
    }

    /// Solar noon at `longitude` for the UTC day `day`: minutes from that day's 0h UTC (the
    /// sun's transit; it happens every day, in polar night too).
    public static func noon(day: Int, longitude: Double) -> Double {
        let julianDay = Double(day) + 2_440_587.5
        var minutes = 720.0
        for _ in 0..<2 {
            let century = (julianDay + minutes / 1440 - 2_451_545.0) / 36_525.0
            minutes = 720 - 4 * longitude - equationOfTime(century)
        }
        return minutes
    }

    /// The equation of time in minutes at a Julian century.
    static func equationOfTime(_ century: Double) -> Double {
        let meanLongitude = geometricMeanLongitude(century)
        let eccentricity = 0.016708634 - century * (0.000042037 + 0.0000001267 * century)
        let anomaly = geometricMeanAnomaly(century)
        let y = pow(tan(radians(obliquityCorrection(century)) / 2), 2)
        let l0 = radians(meanLongitude)
        let m = radians(anomaly)
        let value = y * sin(2 * l0) - 2 * eccentricity * sin(m) + 4 * eccentricity * y * sin(m) * cos(2 * l0)
            - 0.5 * y * y * sin(4 * l0) - 1.25 * eccentricity * eccentricity * sin(2 * m)
        return degrees(value) * 4
    }

    static func sunDeclination(_ century: Double) -> Double {
        degrees(asin(sin(radians(obliquityCorrection(century))) * sin(radians(apparentLongitude(century)))))
    }

    static func geometricMeanLongitude(_ century: Double) -> Double {
        (280.46646 + century * (36000.76983 + 0.0003032 * century)).truncatingRemainder(dividingBy: 360)
    }

    static func geometricMeanAnomaly(_ century: Double) -> Double {
        357.52911 + century * (35999.05029 - 0.0001537 * century)
    }

    static func apparentLongitude(_ century: Double) -> Double {
        let m = radians(geometricMeanAnomaly(century))
        let center = sin(m) * (1.914602 - century * (0.004817 + 0.000014 * century))
            + sin(2 * m) * (0.019993 - 0.000101 * century) + sin(3 * m) * 0.000289
        let omega = 125.04 - 1934.136 * century
        return geometricMeanLongitude(century) + center - 0.00569 - 0.00478 * sin(radians(omega))
    }

    static func obliquityCorrection(_ century: Double) -> Double {
        let seconds = 21.448 - century * (46.815 + century * (0.00059 - century * 0.001813))
        let mean = 23 + (26 + seconds / 60) / 60
        return mean + 0.00256 * cos(radians(125.04 - 1934.136 * century))
    }

    static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
}
