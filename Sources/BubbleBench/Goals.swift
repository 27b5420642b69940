import Foundation

// MARK: issue 67's goals, side by side in one run

/// Issue 67's goals: PDF at 20× Chromium with a tenth of its memory, windows at the cost of
/// their work (≥ 0.7× a same-work server's requests/s, p99 ≤ 1.5× its p99), the first layout of
/// a 1M conversation within 4 s and 350 MB at its peak, a second reader within 60 MB, and
/// PostgreSQL's import at ≥ half of SQLite's rate.
let pdfSpeedGoal = 20.0, pdfMemoryGoal = 10.0, firstLayoutGoalMs = 4_000.0, firstLayoutPeakGoalMB = 350.0, postgresImportShareGoal = 0.5

/// The goals, each beside its figure and the baseline of the same run, and whether it is met;
/// "not measured" when the run left out its case (`--cases`).
func printGoals(_ results: [String: Figures]) {
    var rows: [(goal: String, figure: String, wanted: String, met: String)] = []
    func verdict(_ ok: Bool) -> String { ok ? "met" : "NOT MET" }
    if let pdf = results["render-pdf"], let chrome = results["chromium-pdf"],
        let ours = pdf.microsPerMessage["render"], let theirs = chrome.microsPerMessage["render"]
    {
        let speed = theirs / ours, memory = chrome.peakMemoryMB / pdf.peakMemoryMB
        rows.append(
            (
                "PDF vs Chromium print-to-PDF", String(format: "%.1f× wall, memory 1/%.1f", speed, memory),
                "≥ \(Int(pdfSpeedGoal))×, ≤ 1/\(Int(pdfMemoryGoal))",
                verdict(speed >= pdfSpeedGoal && memory >= pdfMemoryGoal)
            ))
    } else {
        rows.append(("PDF vs Chromium print-to-PDF", "not measured", "", "—"))
    }
    if let f = results["serve-1m"]?.microsPerMessage {
        if let rate = f["window req/s"], let base = f["same-work req/s"], let p99 = f["window p99 ms"], let baseP99 = f["same-work p99 ms"] {
            rows.append(
                (
                    "windows at 50 clients vs same work", String(format: "%.2f× req/s, p99 %.2f×", rate / base, p99 / baseP99),
                    "≥ \(frameworkShareGoal)×, ≤ \(windowP99Ratio)×", verdict(rate / base >= frameworkShareGoal && p99 / baseP99 <= windowP99Ratio)
                ))
        }
        if let ms = f["first layout ms"] {
            rows.append(
                ("first layout of 1M messages", String(format: "%.2f s", ms / 1000), "≤ \(firstLayoutGoalMs / 1000) s", verdict(ms <= firstLayoutGoalMs)))
        }
        if let peak = f["first layout peak RSS MB"] {
            rows.append(
                (
                    "server peak RSS (first layout)", String(format: "%.0f MB", peak), "≤ \(Int(firstLayoutPeakGoalMB)) MB",
                    verdict(peak <= firstLayoutPeakGoalMB)
                ))
        }
        if let second = f["second reader MB"] {
            rows.append(
                ("a second reader (other side)", String(format: "+%.0f MB", second), "≤ \(Int(secondReaderGoalMB)) MB", verdict(second <= secondReaderGoalMB)))
        }
    } else {
        rows.append(("bubbles serve on 1M messages", "not measured", "", "—"))
    }
    if let f = results["postgres"]?.microsPerMessage, let pg = f["postgres import msg/s"], let lite = f["sqlite import msg/s"] {
        rows.append(
            (
                "PostgreSQL import vs SQLite", String(format: "%.3f× (%.0f vs %.0f msg/s)", pg / lite, pg, lite), "≥ \(postgresImportShareGoal)×",
                verdict(pg / lite >= postgresImportShareGoal)
            ))
    } else {
        rows.append(("PostgreSQL import vs SQLite", "not measured", "", "—"))
    }
    print("")
    print("Issue 67's goals in this run (ratios computed from this run's figures)")
    print(pad("goal", 38) + pad("figure", 36) + pad("wanted", 20) + "verdict")
    for r in rows { print(pad(r.goal, 38) + pad(r.figure, 36) + pad(r.wanted, 20) + r.met) }
}
