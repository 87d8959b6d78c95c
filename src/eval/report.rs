//! The harness's reports: JSON for machines, Markdown for people, deltas against a baseline.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::facts::TurnFacts;
use super::metrics::{Coverage, DEFINITIONS, Metrics};

/// The report format written (and read back for `--baseline` and `eval sheet`).
pub const REPORT_VERSION: u32 = 1;

/// One run of a playthrough: its save, seed and turns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub save: PathBuf,
    pub seed: u64,
    pub seconds: f64,
    pub turns: Vec<TurnFacts>,
}

/// How a playthrough was set up, as its report says.
pub struct Setup {
    /// The campaign's title, and its folder.
    pub campaign: String,
    pub campaign_path: PathBuf,
    pub scenario: Option<String>,
    pub model: Option<String>,
    /// The files behind the model keys played (`weights_of`).
    pub weights: Vec<String>,
    pub seed: u64,
    pub turns: usize,
    pub invalid_every: usize,
}

/// What `eval play` measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayReport {
    pub version: u32,
    pub kind: String,
    pub campaign: String,
    pub campaign_path: PathBuf,
    pub scenario: Option<String>,
    /// The model key, or `default` (the campaign's local keys).
    pub model: String,
    /// Each model file and adapter behind the keys played, with the start of
    /// its sha256: two reports of one key with different adapters differ here.
    #[serde(default)]
    pub weights: Vec<String>,
    pub seed: u64,
    pub turns_per_run: usize,
    pub invalid_every: usize,
    /// `git describe` of the build, when it was built from a checkout.
    pub commit: String,
    /// The harness's own wall time, in seconds.
    pub seconds: f64,
    pub metrics: Metrics,
    pub coverage: Coverage,
    pub runs: Vec<Run>,
}

/// Why a report cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a report of this harness (format {REPORT_VERSION}): {source}", path.display())]
    Format {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// The model file and adapter behind each of `keys` in the data dir's
/// `models.ron`, as `key: file (sha256 first 16 hex) + LoRA file (…)`; a
/// key that is not a llama file is described as `loreloom models` says it,
/// and a key it does not name (a scripted model's) is left out. Each file is
/// hashed once.
pub fn weights_of(keys: &[&str]) -> Vec<String> {
    let data_dir = crate::files::data_dir();
    let Ok(config) = crate::llm::config::ModelsConfig::load(&data_dir) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    let mut hashed: std::collections::HashMap<PathBuf, Option<String>> =
        std::collections::HashMap::new();
    for key in keys {
        let Ok(model) = config.get(key, &data_dir) else {
            continue;
        };
        let mut file = |p: &Path| {
            let name = p
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            match hashed
                .entry(p.to_path_buf())
                .or_insert_with(|| sha256_prefix(p))
            {
                Some(h) => format!("{name} ({h})"),
                None => format!("{name} (missing)"),
            }
        };
        let line = match (
            model.backend.model_path(&data_dir),
            model.backend.adapter_path(&data_dir),
        ) {
            (Some(m), Some(a)) => format!("{key}: {} + LoRA {}", file(&m), file(&a)),
            (Some(m), None) => format!("{key}: {}", file(&m)),
            _ => format!("{key}: {}", model.backend.describe(&data_dir)),
        };
        if !said.contains(&line) {
            said.push(line);
        }
    }
    said
}

/// The first 16 hex digits of a file's sha256 (read through, not into memory).
fn sha256_prefix(path: &Path) -> Option<String> {
    use sha2::Digest as _;
    let mut hash = sha2::Sha256::new();
    std::io::copy(&mut std::fs::File::open(path).ok()?, &mut hash).ok()?;
    Some(format!("{:x}", hash.finalize())[..16].to_owned())
}

/// The commit of the checkout Loreloom runs from (`git describe`), else `unknown`.
pub fn commit() -> String {
    std::process::Command::new("git")
        .arg("-C")
        .arg(crate::files::resource_dir("."))
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".into(), |s| s.trim().to_owned())
}

impl PlayReport {
    pub fn new(setup: Setup, runs: Vec<Run>, seconds: f64) -> Self {
        let turns: Vec<&TurnFacts> = runs.iter().flat_map(|r| &r.turns).collect();
        Self {
            version: REPORT_VERSION,
            kind: "play".into(),
            campaign: setup.campaign,
            campaign_path: setup.campaign_path,
            scenario: setup.scenario,
            model: setup.model.unwrap_or_else(|| "default".into()),
            weights: setup.weights,
            seed: setup.seed,
            turns_per_run: setup.turns,
            invalid_every: setup.invalid_every,
            commit: commit(),
            seconds,
            metrics: Metrics::of(&turns),
            coverage: Coverage::of(&turns),
            runs,
        }
    }

    /// Reads a report written by [`PlayReport::write`] (its `report.json`, or the folder).
    pub fn read(path: &Path) -> Result<Self, ReportError> {
        let file = if path.is_dir() {
            path.join("report.json")
        } else {
            path.to_owned()
        };
        let text = std::fs::read_to_string(&file).map_err(|source| ReportError::Io {
            path: file.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ReportError::Format { path: file, source })
    }

    /// Writes `report.json` and `report.md` into `dir`.
    pub fn write(&self, dir: &Path, baseline: Option<&Self>) -> Result<(), ReportError> {
        let io = |path: PathBuf| move |source| ReportError::Io { path, source };
        std::fs::create_dir_all(dir).map_err(io(dir.to_owned()))?;
        let json = serde_json::to_string_pretty(self).unwrap_or_default();
        let path = dir.join("report.json");
        std::fs::write(&path, json).map_err(io(path))?;
        let path = dir.join("report.md");
        std::fs::write(&path, self.markdown(baseline)).map_err(io(path))?;
        Ok(())
    }

    /// The report for people: metrics (with deltas against `baseline`),
    /// coverage, every turn, and each contradiction with its sentence.
    pub fn markdown(&self, baseline: Option<&Self>) -> String {
        let mut md = String::new();
        let _ = writeln!(
            md,
            "# {}: {} runs × {} turns, model {}\n",
            self.campaign,
            self.runs.len(),
            self.turns_per_run,
            self.model
        );
        let _ = writeln!(
            md,
            "Seed {}, every {}th move planted invalid, commit {}, {:.0} s in all.\n",
            self.seed, self.invalid_every, self.commit, self.seconds
        );
        if !self.weights.is_empty() {
            let _ = writeln!(md, "Weights: {}.\n", self.weights.join("; "));
        }
        md.push_str(&metrics_table(&self.metrics, baseline.map(|b| &b.metrics)));
        if let Some(b) = baseline {
            let worse = worse(&self.metrics, &b.metrics);
            md.push_str("\n## Worse than the baseline\n\n");
            if worse.is_empty() {
                md.push_str("Nothing.\n");
            }
            for w in worse {
                let _ = writeln!(md, "- {w}");
            }
        }
        self.coverage_md(&mut md);
        self.contradictions_md(&mut md);
        self.turns_md(&mut md);
        md.push_str("\n## Definitions\n\n");
        for (name, def) in DEFINITIONS {
            let _ = writeln!(md, "- `{name}`: {def}");
        }
        md
    }

    fn coverage_md(&self, md: &mut String) {
        md.push_str("\n## Coverage\n\n");
        let c = &self.coverage;
        for (name, set) in [
            ("places visited", &c.places_visited),
            ("people met", &c.people_met),
            ("clocks advanced", &c.clocks_advanced),
            ("triggers fired", &c.triggers_fired),
            ("threads opened", &c.threads_opened),
            ("threads resolved", &c.threads_resolved),
            ("beats reached", &c.beats_reached),
        ] {
            let list: Vec<&str> = set.iter().map(String::as_str).collect();
            let _ = writeln!(md, "- {name} ({}): {}", list.len(), list.join(", "));
        }
    }

    fn contradictions_md(&self, md: &mut String) {
        md.push_str("\n## Contradictions\n\n");
        let mut any = false;
        for (r, run) in self.runs.iter().enumerate() {
            for t in &run.turns {
                for h in &t.contradictions {
                    any = true;
                    let _ = writeln!(
                        md,
                        "- run {} turn {}: {} ({}): «{}»",
                        r + 1,
                        t.turn,
                        h.kind.name(),
                        h.about,
                        h.sentence
                    );
                }
            }
        }
        if !any {
            md.push_str("None found.\n");
        }
    }

    fn turns_md(&self, md: &mut String) {
        md.push_str("\n## Turns\n\n| run | turn | move | planted | outcome | asked | words | voice | contradictions | first words ms |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (r, run) in self.runs.iter().enumerate() {
            for t in &run.turns {
                let words: usize = t.narrations.iter().map(|n| n.words).sum();
                let voice = t.narrations.iter().filter(|n| n.in_voice).count();
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} | {} | {}/{} | {} | {} |",
                    r + 1,
                    t.turn,
                    cell(&t.mv.text),
                    t.mv.invalid.map_or("", |i| i.name()),
                    t.failed.as_ref().map_or_else(
                        || format!(
                            "{:?}",
                            t.outcome
                                .unwrap_or(crate::session::continuity::Outcome::Unrolled)
                        )
                        .to_lowercase(),
                        |_| "failed".into()
                    ),
                    if t.clarified { "yes" } else { "" },
                    words,
                    voice,
                    t.narrations.len(),
                    t.contradictions.len(),
                    t.cost
                        .first_words_ms
                        .map_or_else(String::new, |ms| format!("{ms:.0}"))
                );
            }
        }
        md.push_str("\n## Narrations\n");
        for (r, run) in self.runs.iter().enumerate() {
            let _ = writeln!(
                md,
                "\n### Run {} (seed {}, {})\n",
                r + 1,
                run.seed,
                run.save.display()
            );
            for t in &run.turns {
                let _ = writeln!(md, "**{}. > {}**\n", t.turn, t.mv.text);
                for n in &t.narrations {
                    let _ = writeln!(md, "{}\n", n.text);
                }
            }
        }
    }
}

/// A Markdown table cell: no pipes, no newlines.
fn cell(text: &str) -> String {
    text.replace('|', "/").replace('\n', " ")
}

fn show(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.3}"))
}

/// The metrics as a Markdown table, with the baseline's value and the delta.
pub fn metrics_table(m: &Metrics, baseline: Option<&Metrics>) -> String {
    let mut md = String::from("| metric | value | baseline | delta |\n|---|---|---|---|\n");
    let base = baseline.map(Metrics::directed);
    for (i, (name, value, _)) in m.directed().into_iter().enumerate() {
        let b = base
            .as_ref()
            .and_then(|b| b.get(i))
            .and_then(|(_, v, _)| *v);
        let delta = match (value, b) {
            (Some(v), Some(b)) => format!("{:+.3}", v - b),
            _ => String::new(),
        };
        let _ = writeln!(md, "| {name} | {} | {} | {delta} |", show(value), show(b));
    }
    let _ = writeln!(md, "| turns | {} | | |", m.turns);
    let _ = writeln!(md, "| invalid moves planted | {} | | |", m.invalid_moves);
    let _ = writeln!(
        md,
        "| consequences fired / told (by the engine's words) | {} / {} ({}) | | |",
        m.consequences_fired,
        m.consequences_told
            .map_or_else(|| "n/a".to_owned(), |s| format!("{:.0}%", s * 100.0)),
        m.consequences_appended
    );
    let _ = writeln!(
        md,
        "| narrations told again for contradictions / the second kept | {} / {} | | |",
        m.retold, m.retold_kept_second
    );
    let _ = writeln!(
        md,
        "| narrations by the engine (not in the prose metrics) | {} | | |",
        m.engine_narrations
    );
    let _ = writeln!(
        md,
        "| introduced / met again | {} / {} | | |",
        m.introduced, m.introduced_met
    );
    let _ = writeln!(md, "| clarifications | {} | | |", m.clarifications);
    let _ = writeln!(
        md,
        "| length_stats (words) | {:.0} / {:.1} / {:.0} | | |",
        m.length_stats.min, m.length_stats.mean, m.length_stats.max
    );
    let _ = writeln!(
        md,
        "| failed or ruled-out moves | {} | | |",
        m.failed_or_blocked
    );
    let _ = writeln!(md, "| repeated sentences | {} | | |", m.repeated_sentences);
    let _ = writeln!(md, "| ops proposed | {} | | |", m.ops_proposed);
    let _ = writeln!(md, "| failed turns | {} | | |", m.failed_turns);
    let _ = writeln!(
        md,
        "| tokens in / out per turn | {:.0} / {:.0} | | |",
        m.tokens_in_per_turn, m.tokens_out_per_turn
    );
    for (kind, n) in &m.contradictions {
        let _ = writeln!(md, "| contradictions: {kind} | {n} | | |");
    }
    md
}

/// The metrics that moved the wrong way against `baseline` (beyond a
/// rounding step), in words.
pub fn worse(m: &Metrics, baseline: &Metrics) -> Vec<String> {
    let base = baseline.directed();
    m.directed()
        .into_iter()
        .zip(base)
        .filter_map(|((name, v, higher_better), (_, b, _))| {
            let (v, b) = (v?, b?);
            let step = if name.ends_with("_ms_p50") || name.ends_with("_ms_p90") {
                // Latency: 10% and 50 ms, so machine noise is not news.
                (b * 0.1).max(50.0)
            } else {
                0.005
            };
            let worse = if higher_better {
                v < b - step
            } else {
                v > b + step
            };
            worse.then(|| format!("{name}: {b:.3} → {v:.3}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_by_the_start_of_its_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("abc");
        std::fs::write(&file, "abc").unwrap();
        assert_eq!(sha256_prefix(&file).as_deref(), Some("ba7816bf8f01cfea"));
        assert_eq!(sha256_prefix(&dir.path().join("absent")), None);
    }
}
