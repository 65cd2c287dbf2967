import ChimeRuntime
import Foundation

/// A scheduler people use today, run by `chime bench --peer` on the same plan as Chime in the
/// same sitting, so each figure has the peer's beside it (issue 28's goals are stated as
/// "≤ the peer in the same run").
///
/// The peer runs in a `python3` child with the handler of WORKLOADS.md as its job: it takes
/// `time.time()` first and appends `"<id> <due> <actual>"` to the records file with one
/// `os.write` (O_APPEND). The bench writes the plan file, follows the records file, samples
/// the child's RSS and PSS (every 0.2 s) and computes the metrics with the same code as for
/// Chime (``RunMetrics``).
public enum PeerScheduler: String, Sendable, Codable, CaseIterable {
    /// APScheduler 3.x `BackgroundScheduler` in one Python process: the in-memory job store,
    /// a pool of 10 threads, one `date` job per reminder added with `add_job` (one call per
    /// reminder, as WORKLOADS.md asks), no misfire grace limit (every job runs, however
    /// late), no coalescing. No durability: a crash loses everything (so W1 and W2 only).
    /// Needs `pip install 'apscheduler<4'`.
    case apscheduler

    /// The workloads the peer runs: those without a crash or a durable store.
    public static let workloads: Set<Workload> = [.w1, .w2]

    /// The child's source, written to the run's directory. Arguments: the run's directory.
    /// It writes `ready` there once the scheduler has started, waits for `plan.txt` (renamed
    /// into place, so it is whole), schedules every line, writes `ingested` with the first
    /// call's and the last return's instants (epoch seconds) and runs until SIGTERM.
    static let apschedulerScript = #"""
        import os, sys, time
        from datetime import datetime, timezone

        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler


        def write_file(path, text):
            with open(path + ".tmp", "w") as handle:
                handle.write(text)
            os.rename(path + ".tmp", path)


        def main():
            directory = sys.argv[1]
            records = os.open(os.path.join(directory, "records.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

            def handler(reminder, due):
                actual = time.time()
                os.write(records, b"%d %.6f %.6f\n" % (reminder, due, actual))

            scheduler = BackgroundScheduler(
                executors={"default": ThreadPoolExecutor(10)},
                job_defaults={"misfire_grace_time": None, "coalesce": False},
                timezone=timezone.utc,
            )
            scheduler.start()
            write_file(os.path.join(directory, "ready"), "ready\n")
            plan_path = os.path.join(directory, "plan.txt")
            while not os.path.exists(plan_path):
                time.sleep(0.001)
            with open(plan_path) as handle:
                plan = [(int(fields[0]), float(fields[1])) for fields in (line.split() for line in handle)]
            started = time.time()
            for reminder, due in plan:
                scheduler.add_job(
                    handler, "date", run_date=datetime.fromtimestamp(due, timezone.utc), args=(reminder, due),
                    id=str(reminder))
            ended = time.time()
            write_file(os.path.join(directory, "ingested"), "%.6f %.6f\n" % (started, ended))
            while True:
                time.sleep(3600)


        if __name__ == "__main__":
            try:
                main()
            except KeyboardInterrupt:
                pass
        """#

    /// The `ingested` file's text: the first call's and the last return's instants (epoch
    /// seconds, space-separated); `nil` unless exactly two finite numbers with end ≥ start.
    static func parseIngested(_ text: String) -> (start: Double, end: Double)? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let start = Double(fields[0]), let end = Double(fields[1]),
            start.isFinite, end.isFinite, end >= start
        else { return nil }
        return (start, end)
    }
}
