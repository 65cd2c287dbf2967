import Foundation
import Synchronization

/// The latest overview, so a page never waits for a slow shard twice: the sampler refreshes
/// it every interval, and a page takes it as it is while it is younger than ``maximumAge``
/// or while a refresh is under way (a shard that does not answer holds a refresh up for the
/// client's timeout); only a page that finds no fresh overview and no refresh asks itself.
public final class OverviewCache: Sendable {
    private struct State {
        var latest: OverviewView?
        var isRefreshing = false
    }

    private let state = Mutex(State())
    /// How old an overview a page takes, in seconds.
    public let maximumAge: TimeInterval

    /// - Parameter maximumAge: how old an overview a page takes, in seconds.
    public init(maximumAge: TimeInterval) {
        self.maximumAge = maximumAge
    }

    /// The cached overview when fresh enough (or when a refresh is under way), else a new one.
    public func overview(from source: any DashboardSource, now: Date = Date()) -> OverviewView {
        let cached: OverviewView? = state.withLock { state in
            if let latest = state.latest, state.isRefreshing || now.timeIntervalSince(latest.takenAt) < maximumAge {
                return latest
            }
            state.isRefreshing = true
            return nil
        }
        return cached ?? store(source.overview())
    }

    /// Asks the cluster now (the sampler's call) and keeps the answer.
    public func refresh(from source: any DashboardSource) -> OverviewView {
        state.withLock { $0.isRefreshing = true }
        return store(source.overview())
    }

    private func store(_ overview: OverviewView) -> OverviewView {
        state.withLock { state in
            if (state.latest?.takenAt ?? .distantPast) <= overview.takenAt { state.latest = overview }
            state.isRefreshing = false
        }
        return overview
    }
}
