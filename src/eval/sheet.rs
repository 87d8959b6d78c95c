//! The blind judging sheet: narrations shuffled with their sources hidden, then scored.
//!
//! `eval sheet` writes three files into a folder: `sheet.md` (each item's
//! move, the engine's outcome, the scene and the story just before, then the
//! narration to rate, under an id that says nothing of its source),
//! `ratings.tsv` (one line per id for the rater to fill) and `key/key.json`
//! (id → source), kept apart: hand the rater `sheet.md` and `ratings.tsv`
//! only. `eval score` reads the filled ratings and the key and prints each
//! source's means and distributions.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::report::{PlayReport, ReportError};
use crate::session::turn::PERSONA;

/// The rubric printed atop every sheet.
pub const RUBRIC: &str = "Rate each narration on its own, against its move, outcome and scene:

- **coherence** 1–5: it follows from the move, the outcome and the scene; it makes sense sentence to sentence; it contradicts nothing given (who is here, what is held, what failed, what was said just before). 1: nonsense or reverses the outcome; 2: mostly wrong; 3: follows but with a clear slip; 4: sound with a small flaw; 5: sound throughout.
- **in_voice** y/n: it reads as the story, telling the player what \"you\" do, with no assistant or meta talk.
- **grounded** y/n: it is about this scene's people, places or things, not generic.

Fill `ratings.tsv`: one line per id, tab-separated (id, coherence, in_voice, grounded, notes).";

/// The rubric of a sheet of whole turns (`--whole-turns`).
pub const RUBRIC_TURNS: &str = "Rate each turn's text as a whole, as the player reads it (what \"you\" do, then what the others here do and say), against its move, outcome and scene:

- **coherence** 1–5: it follows from the move, the outcome and the scene; it makes sense sentence to sentence and one part to the next; it contradicts nothing given (who is here, what is held, what failed, what was said just before). 1: nonsense or reverses the outcome; 2: mostly wrong; 3: follows but with a clear slip; 4: sound with a small flaw; 5: sound throughout.
- **in_voice** y/n: it reads as the story, with no assistant or meta talk.
- **grounded** y/n: it is about this scene's people, places or things, not generic.

Fill `ratings.tsv`: one line per id, tab-separated (id, coherence, in_voice, grounded, notes).";

/// One item of a sheet, as the key keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyEntry {
    pub id: String,
    /// The report the narration came from (its label), run and turn.
    pub source: String,
    pub run: usize,
    pub turn: usize,
}

/// A narration to rate, with what the rater needs to judge it.
#[derive(Clone, Debug)]
struct Item {
    source: String,
    run: usize,
    turn: usize,
    mv: String,
    outcome: String,
    place: String,
    present: Vec<String>,
    before: String,
    narration: String,
}

/// Why a sheet cannot be written or scored.
#[derive(Debug, thiserror::Error)]
pub enum SheetError {
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {reason}", path.display())]
    Key { path: PathBuf, reason: String },
    #[error("{}, line {line}: {reason}", path.display())]
    Rating {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

/// The label a report is known by on a key: its folder name (or file stem).
pub fn label(path: &Path) -> String {
    let p = if path.file_name().is_some_and(|n| n == "report.json") {
        path.parent().unwrap_or(path)
    } else {
        path
    };
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// How the rater reads an id of the report's campaign: a person's or a
/// place's name ("The Surveyor (you)" for the player), the id itself when
/// the campaign cannot be read.
struct Names(Option<std::sync::Arc<crate::campaign::Campaign>>);

impl Names {
    fn of(report: &PlayReport) -> Self {
        Self(crate::session::save_files::load_campaign(&report.campaign_path).ok())
    }

    fn person(&self, id: &str) -> String {
        let name = self
            .0
            .as_ref()
            .and_then(|c| c.characters.get(id))
            .map_or_else(|| id.to_owned(), |c| c.name.clone());
        if id == PERSONA {
            format!("{name} (you)")
        } else {
            name
        }
    }

    fn place(&self, id: &str) -> String {
        self.0
            .as_ref()
            .and_then(|c| c.locations.get(id))
            .map_or_else(|| id.to_owned(), |l| l.name.clone())
    }
}

/// The persona narrations of a report, each with its context: the model's
/// words on the player's own moves (a planted invalid move, and a narration
/// the engine wrote itself, are left out, so two reports compare like with
/// like). With `whole`, each turn's whole text instead, every narration of
/// it in order, whoever wrote it (a planted move's turn left out).
fn items(label: &str, report: &PlayReport, whole: bool) -> Vec<Item> {
    let names = Names::of(report);
    let mut out = Vec::new();
    for (r, run) in report.runs.iter().enumerate() {
        let mut before = String::new();
        for t in &run.turns {
            let planted = t.mv.invalid.is_some();
            let mine: Vec<&str> = t
                .narrations
                .iter()
                .filter(|n| !planted && (whole || (n.owner == PERSONA && !n.by_engine)))
                .map(|n| n.text.as_str())
                .collect();
            let all: Vec<&str> = t.narrations.iter().map(|n| n.text.as_str()).collect();
            if let (false, Some(outcome)) = (mine.is_empty(), t.outcome) {
                out.push(Item {
                    source: label.to_owned(),
                    run: r + 1,
                    turn: t.turn,
                    mv: t.mv.text.clone(),
                    outcome: format!("{outcome:?}").to_lowercase(),
                    place: names.place(&t.place),
                    present: t.present.iter().map(|id| names.person(id)).collect(),
                    before: before.clone(),
                    narration: mine.join(if whole { "\n\n" } else { " " }),
                });
            }
            if !all.is_empty() {
                before = all.join(" ");
            }
        }
    }
    out
}

/// Writes a blind sheet of at most `count` narrations (with `whole`, whole
/// turns) from `reports` (as many from each as the smallest allows,
/// shuffled with `seed`) into `dir`.
pub fn write(
    reports: &[PathBuf],
    dir: &Path,
    count: usize,
    seed: u64,
    whole: bool,
) -> Result<usize, SheetError> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut pools = Vec::new();
    for path in reports {
        let report = PlayReport::read(path)?;
        let mut pool = items(&label(path), &report, whole);
        pool.shuffle(&mut rng);
        pools.push(pool);
    }
    let per = pools
        .iter()
        .map(Vec::len)
        .min()
        .unwrap_or(0)
        .min(count / pools.len().max(1));
    let mut chosen: Vec<Item> = pools
        .into_iter()
        .flat_map(|p| p.into_iter().take(per))
        .collect();
    chosen.shuffle(&mut rng);
    let io = |path: PathBuf| move |source| SheetError::Io { path, source };
    std::fs::create_dir_all(dir.join("key")).map_err(io(dir.join("key")))?;
    let (what, rubric) = if whole {
        ("turns", RUBRIC_TURNS)
    } else {
        ("narrations", RUBRIC)
    };
    let mut sheet = format!("# Blind sheet: {} {what}\n\n{rubric}\n", chosen.len());
    let mut ratings = String::from("id\tcoherence\tin_voice\tgrounded\tnotes\n");
    let mut key = Vec::new();
    for (i, item) in chosen.iter().enumerate() {
        let id = format!("N{:03}", i + 1);
        let _ = write!(
            sheet,
            "\n## {id}\n\n- Move: {}\n- Outcome (the engine's): {}\n- Scene: {}; present: {}\n",
            item.mv,
            item.outcome,
            if item.place.is_empty() {
                "(unnamed)"
            } else {
                &item.place
            },
            if item.present.is_empty() {
                "(no one listed)".to_owned()
            } else {
                item.present.join(", ")
            },
        );
        if !item.before.is_empty() {
            let _ = writeln!(sheet, "- Just before: {}", item.before);
        }
        let _ = writeln!(sheet, "\n> {}", item.narration.replace('\n', "\n> "));
        let _ = writeln!(ratings, "{id}\t\t\t\t");
        key.push(KeyEntry {
            id,
            source: item.source.clone(),
            run: item.run,
            turn: item.turn,
        });
    }
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(io(path))
    };
    write("sheet.md", sheet)?;
    write("ratings.tsv", ratings)?;
    write(
        "key/key.json",
        serde_json::to_string_pretty(&key).unwrap_or_default(),
    )?;
    Ok(chosen.len())
}

/// One filled line of `ratings.tsv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    pub id: String,
    pub coherence: u8,
    pub in_voice: bool,
    pub grounded: bool,
}

/// Reads a filled `ratings.tsv`; an id left unrated is skipped.
pub fn read_ratings(path: &Path) -> Result<Vec<Rating>, SheetError> {
    let text = std::fs::read_to_string(path).map_err(|source| SheetError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let bad = |reason: String| SheetError::Rating {
            path: path.to_owned(),
            line: i + 1,
            reason,
        };
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if fields.len() < 4 || fields[1].is_empty() {
            continue;
        }
        let coherence: u8 = fields[1]
            .parse()
            .ok()
            .filter(|c| (1..=5).contains(c))
            .ok_or_else(|| bad(format!("coherence is 1 to 5, not `{}`", fields[1])))?;
        let yes = |f: &str, what: &str| match f.to_lowercase().as_str() {
            "y" | "yes" | "1" => Ok(true),
            "n" | "no" | "0" => Ok(false),
            other => Err(bad(format!("{what} is y or n, not `{other}`"))),
        };
        out.push(Rating {
            id: fields[0].to_owned(),
            coherence,
            in_voice: yes(fields[2], "in_voice")?,
            grounded: yes(fields[3], "grounded")?,
        });
    }
    Ok(out)
}

/// Each source's scores.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Score {
    pub rated: usize,
    pub coherence_mean: f64,
    /// How many items got each coherence score, 1 to 5.
    pub coherence: [usize; 5],
    pub in_voice: f64,
    pub grounded: f64,
}

/// The ratings in `dir` joined to their sources by the key.
pub fn score(dir: &Path) -> Result<BTreeMap<String, Score>, SheetError> {
    let key_path = dir.join("key/key.json");
    let text = std::fs::read_to_string(&key_path).map_err(|source| SheetError::Io {
        path: key_path.clone(),
        source,
    })?;
    let key: Vec<KeyEntry> = serde_json::from_str(&text).map_err(|e| SheetError::Key {
        path: key_path.clone(),
        reason: e.to_string(),
    })?;
    let source: BTreeMap<&str, &str> = key
        .iter()
        .map(|k| (k.id.as_str(), k.source.as_str()))
        .collect();
    let mut scores: BTreeMap<String, Score> = BTreeMap::new();
    let mut sums: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let ratings_path = dir.join("ratings.tsv");
    for r in read_ratings(&ratings_path)? {
        let Some(src) = source.get(r.id.as_str()) else {
            return Err(SheetError::Key {
                path: key_path,
                reason: format!("`{}` is rated but not on the key", r.id),
            });
        };
        let s = scores.entry((*src).to_owned()).or_default();
        s.rated += 1;
        s.coherence[usize::from(r.coherence - 1)] += 1;
        let sum = sums.entry((*src).to_owned()).or_default();
        sum.0 += usize::from(r.coherence);
        sum.1 += usize::from(r.in_voice);
        sum.2 += usize::from(r.grounded);
    }
    for (src, s) in &mut scores {
        let (c, v, g) = sums.get(src).copied().unwrap_or_default();
        #[expect(clippy::cast_precision_loss, reason = "counts of ratings")]
        let n = s.rated as f64;
        #[expect(clippy::cast_precision_loss, reason = "counts of ratings")]
        {
            s.coherence_mean = c as f64 / n;
            s.in_voice = v as f64 / n;
            s.grounded = g as f64 / n;
        }
    }
    Ok(scores)
}
