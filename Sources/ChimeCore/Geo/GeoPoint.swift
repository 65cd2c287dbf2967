import Foundation

/// A place on the Earth: latitude and longitude in degrees (WGS-84; north and east
/// positive).
public struct GeoPoint: Hashable, Sendable, Codable {
    /// Degrees, −90…90.
    public var latitude: Double
    /// Degrees, −180…180.
    public var longitude: Double

    /// Creates a point.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Checks the ranges.
    /// - Throws: `ValidationError` `.invalidArgument` with field `<prefix>.latitude` or
    ///   `<prefix>.longitude`.
    public func validate(field prefix: String) throws(ValidationError) {
        guard latitude.isFinite, abs(latitude) <= 90 else {
            throw ValidationError(.invalidArgument, field: "\(prefix).latitude", "latitude must be −90 to 90 degrees")
        }
        guard longitude.isFinite, abs(longitude) <= 180 else {
            throw ValidationError(.invalidArgument, field: "\(prefix).longitude", "longitude must be −180 to 180 degrees")
        }
    }

    /// The geodesic distance to `other` in metres: Vincenty's inverse formula on the WGS-84
    /// ellipsoid (T. Vincenty, "Direct and inverse solutions of geodesics on the ellipsoid",
    /// Survey Review 1975), accurate to well under a millimetre; for nearly antipodal points,
    /// where it does not converge in 200 iterations, the haversine distance on a sphere of the
    /// mean radius (within 0.5 %).
    public func distance(to other: GeoPoint) -> Double {
        Geodesy.vincentyDistance(self, other) ?? Geodesy.haversineDistance(self, other)
    }
}

/// Distances on the Earth.
public enum Geodesy {
    /// WGS-84 semi-major axis, metres.
    public static let equatorialRadius = 6_378_137.0
    /// WGS-84 flattening.
    public static let flattening = 1 / 298.257223563
    /// The mean radius (IUGG), metres.
    public static let meanRadius = 6_371_008.8

    /// Vincenty's inverse formula; `nil` when it does not converge (nearly antipodal points).
    public static func vincentyDistance(_ a: GeoPoint, _ b: GeoPoint) -> Double? {
        let f = flattening
        let semiMajor = equatorialRadius
        let semiMinor = (1 - f) * semiMajor
        let lambdaL = (b.longitude - a.longitude) * .pi / 180
        let u1 = atan((1 - f) * tan(a.latitude * .pi / 180))
        let u2 = atan((1 - f) * tan(b.latitude * .pi / 180))
        let sinU1 = sin(u1), cosU1 = cos(u1), sinU2 = sin(u2), cosU2 = cos(u2)
        var lambda = lambdaL
        for _ in 0..<200 {
            let sinLambda = sin(lambda), cosLambda = cos(lambda)
            let sinSigma = sqrt(pow(cosU2 * sinLambda, 2) + pow(cosU1 * sinU2 - sinU1 * cosU2 * cosLambda, 2))
            if sinSigma == 0 { return 0 }
            let cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            let sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            let cosSqAlpha = 1 - sinAlpha * sinAlpha
            let cos2SigmaM = cosSqAlpha == 0 ? 0 : cosSigma - 2 * sinU1 * sinU2 / cosSqAlpha
            let c = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
            let previous = lambda
            lambda = lambdaL + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-12 {
                let uSq = cosSqAlpha * (semiMajor * semiMajor - semiMinor * semiMinor) / (semiMinor * semiMinor)
                let bigA = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
                let bigB = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
                let deltaSigma = bigB * sinSigma
                    * (cos2SigmaM + bigB / 4
                        * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) - bigB / 6 * cos2SigmaM
                            * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
                return semiMinor * bigA * (sigma - deltaSigma)
            }
        }
        return nil
    }

    /// The great-circle distance on a sphere of the mean radius, metres.
    public static func haversineDistance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let phi1 = a.latitude * .pi / 180, phi2 = b.latitude * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let h = pow(sin(dPhi / 2), 2) + cos(phi1) * cos(phi2) * pow(sin(dLambda / 2), 2)
        return 2 * meanRadius * asin(min(1, sqrt(h)))
    }
}
