//! An authoring project folder and where it stands between the human gates.
//!
//! Seed 000 "File Structure": `graph.db`, `snapshots/pre-<stage>.db` copied before each stage
//! runs, `exports/` for review, optional `prompts/` overrides.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::ask::StageError;
use super::graph::{Graph, GraphError, Mutation};
use super::ontology::{LAST_BUILT, Stage};
use super::review::ReviewError;

/// The most an edited `graph.yaml` may hold (a whole story's graph is a few hundred KiB).
const GRAPH_YAML_CAP: u64 = 16 << 20;

/// How long the story is meant to be (seed 000 `vision.scope.length`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Micro,
    Short,
    Medium,
    Long,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Micro => "micro",
            Scope::Short => "short",
            Scope::Medium => "medium",
            Scope::Long => "long",
        }
    }
}

/// Where a stage stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Not run yet.
    Pending,
    /// Run; waiting for the author's review and approval.
    Review,
    /// Approved: the next stage may run.
    Approved,
    /// One of the stage's inner gates is passed (FILL's voice, DRESS's art
    /// direction, budget and sample); the next run goes on from there.
    Resume,
}

/// A gate inside a stage: the `gate.<stage>` value while it waits, the
/// value once the author passes it, and what `status` says of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inner {
    pub waiting: &'static str,
    pub passed: &'static str,
    waits: &'static str,
    next: &'static str,
}

/// The inner gates of a stage, in the order it reaches them.
pub fn inner_gates(stage: Stage) -> &'static [Inner] {
    match stage {
        Stage::Fill => &[
            Inner {
                waiting: "voice",
                passed: "voiced",
                waits: "voice written, waiting for review",
                next: "voice approved; the prose is next",
            },
            Inner {
                waiting: "prose",
                passed: "prose-approved",
                waits: "prose written, waiting for the author's reading before the review",
                next: "prose approved; the review and revision are next",
            },
        ],
        Stage::Dress => &[
            Inner {
                waiting: "art",
                passed: "art-approved",
                waits: "art direction written, waiting for review (gate 1)",
                next: "art direction approved; the briefs and the codex are next",
            },
            Inner {
                waiting: "briefs",
                passed: "briefs-approved",
                waits: "briefs and codex written, waiting for review and the image budget (gate 2)",
                next: "budget set; the sample illustration is next",
            },
            Inner {
                waiting: "sample",
                passed: "sample-approved",
                waits: "the sample illustration is drawn; waiting for the author to confirm its style",
                next: "sample approved; the other illustrations are next",
            },
        ],
        _ => &[],
    }
}

/// What went wrong with a project (each names the file or stage and what to do).
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A stage's run failed; nothing of its unfinished batch is written.
    #[error("{stage} failed: {source}")]
    Stage { stage: Stage, source: StageError },
    #[error(
        "{} already holds a project; open it with `loreloom author status {}`",
        .dir.display(),
        .dir.display()
    )]
    Exists { dir: PathBuf },
    #[error("a project starts from a spark: --spark \"a noir mystery on a space station\"")]
    NoSpark,
    #[error(
        "{} is not an authoring project (no graph.db); make one with `loreloom author new {} --spark \"…\"`",
        .dir.display(),
        .dir.display()
    )]
    NotAProject { dir: PathBuf },
    #[error(
        "{waiting} is waiting for review: `loreloom author review {dir}`, then `loreloom author approve {dir}` (or `loreloom author rollback {dir} {name}`)",
        name = .waiting.name(),
        dir = .dir.display()
    )]
    InReview { waiting: Stage, dir: PathBuf },
    #[error(
        "{stage} has already run; `loreloom author rollback {} {}` to run it again",
        .dir.display(),
        .stage.name()
    )]
    AlreadyRan { stage: Stage, dir: PathBuf },
    #[error("{next} comes before {stage}; run the stages in order")]
    OutOfOrder { next: Stage, stage: Stage },
    #[error("{stage} has no inner gate `{waiting}`")]
    NoInnerGate { stage: Stage, waiting: String },
    #[error("no stage is waiting for approval; `loreloom author status` says what is next")]
    NothingToApprove,
    #[error(
        "DRESS gate 2: choose which illustrations to draw before approving (no silent default): `loreloom author approve {} --render priority-2` (or none, priority-1, priority-3, all, top-N); exports/graph.md lists the briefs by priority",
        .dir.display()
    )]
    NoBudget { dir: PathBuf },
    #[error(
        "the image budget is chosen at DRESS's gate 2, once the briefs and the codex are written"
    )]
    NotAtBudgetGate,
    #[error(
        "nothing is under review: the author edits at a gate, after a stage ran and before it is approved"
    )]
    NothingInReview,
    #[error("`{field}`: write FIELD=VALUE (VALUE as JSON, or plain text)")]
    BadField { field: String },
    #[error(
        "{}: not YAML the review wrote ({source}); fix it or write it again with `loreloom author review`",
        .path.display()
    )]
    NotYaml {
        path: PathBuf,
        source: serde_norway::Error,
    },
    /// An edited `graph.yaml` that does not read as the review's document.
    #[error("{}: {source}", .path.display())]
    Edited { path: PathBuf, source: ReviewError },
    #[error("{stage} has not run in this project (no {}); nothing to roll back", .snapshot.display())]
    NotRun { stage: Stage, snapshot: PathBuf },
    #[error("the graph has no vision: run DREAM first")]
    NoVision,
}

/// An I/O error as a project error naming the file.
pub fn io(path: &Path) -> impl Fn(std::io::Error) -> ProjectError + '_ {
    move |source| ProjectError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Copies a closed graph file whole: into a temporary file beside `to`,
/// flushed, then renamed over it, so a kill at any moment leaves `to` as it
/// was or as `from` is, never torn (#44).
fn copy_whole(from: &Path, to: &Path) -> Result<(), ProjectError> {
    let bytes = std::fs::read(from).map_err(io(from))?;
    crate::files::write_atomically(to, &bytes).map_err(io(to))
}

/// An open project.
pub struct Project {
    pub dir: PathBuf,
    pub graph: Graph,
}

impl Project {
    /// Makes a new project folder with its spark and scope.
    pub fn create(dir: &Path, spark: &str, scope: Scope) -> Result<Self, ProjectError> {
        let db = dir.join("graph.db");
        if db.exists() {
            return Err(ProjectError::Exists {
                dir: dir.to_owned(),
            });
        }
        if spark.trim().is_empty() {
            return Err(ProjectError::NoSpark);
        }
        for sub in ["snapshots", "exports"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(io(&dir.join(sub)))?;
        }
        let mut graph = Graph::open(&db)?;
        graph.apply(
            Stage::Dream,
            "new",
            "the author's spark and scope",
            &[
                Mutation::Meta {
                    key: "spark".into(),
                    value: json!(spark.trim()),
                },
                Mutation::Meta {
                    key: "scope".into(),
                    value: json!(scope.name()),
                },
            ],
        )?;
        Ok(Self {
            dir: dir.to_owned(),
            graph,
        })
    }

    /// Opens an existing project folder.
    pub fn open(dir: &Path) -> Result<Self, ProjectError> {
        let db = dir.join("graph.db");
        if !db.is_file() {
            return Err(ProjectError::NotAProject {
                dir: dir.to_owned(),
            });
        }
        Ok(Self {
            dir: dir.to_owned(),
            graph: Graph::open(&db)?,
        })
    }

    pub fn spark(&self) -> Result<String, ProjectError> {
        Ok(self
            .graph
            .meta("spark")?
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default())
    }

    pub fn scope(&self) -> Result<Scope, ProjectError> {
        Ok(self
            .graph
            .meta("scope")?
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or(Scope::Short))
    }

    /// Where a stage stands.
    pub fn gate(&self, stage: Stage) -> Result<Gate, ProjectError> {
        Ok(
            match self
                .graph
                .meta(&format!("gate.{}", stage.name()))?
                .as_ref()
                .and_then(Value::as_str)
            {
                Some("approved") => Gate::Approved,
                Some("review") => Gate::Review,
                Some(v) if inner_gates(stage).iter().any(|g| g.waiting == v) => Gate::Review,
                Some(v) if inner_gates(stage).iter().any(|g| g.passed == v) => Gate::Resume,
                _ => Gate::Pending,
            },
        )
    }

    /// The stage's gate value as stored (`review`, `voice`, `art-approved`, …).
    pub fn gate_value(&self, stage: Stage) -> Result<Option<String>, ProjectError> {
        Ok(self
            .graph
            .meta(&format!("gate.{}", stage.name()))?
            .and_then(|v| v.as_str().map(str::to_owned)))
    }

    /// The inner gate the stage waits at, if it waits at one.
    pub fn waiting_inner(&self, stage: Stage) -> Result<Option<Inner>, ProjectError> {
        self.inner_where(stage, |g| g.waiting)
    }

    /// The inner gate the stage last passed, if it goes on from one.
    pub fn passed_inner(&self, stage: Stage) -> Result<Option<Inner>, ProjectError> {
        self.inner_where(stage, |g| g.passed)
    }

    /// The inner gate whose `value` is the stage's gate value now.
    fn inner_where(
        &self,
        stage: Stage,
        value: fn(&Inner) -> &'static str,
    ) -> Result<Option<Inner>, ProjectError> {
        let now = self.gate_value(stage)?;
        Ok(inner_gates(stage)
            .iter()
            .find(|g| Some(value(g)) == now.as_deref())
            .copied())
    }

    /// The stage waiting for review, if one is.
    pub fn in_review(&self) -> Result<Option<Stage>, ProjectError> {
        for stage in Stage::ALL {
            if self.gate(stage)? == Gate::Review {
                return Ok(Some(stage));
            }
        }
        Ok(None)
    }

    /// The next stage to run (none once everything built so far is approved
    /// up to the last stage).
    pub fn next_stage(&self) -> Result<Option<Stage>, ProjectError> {
        for stage in Stage::ALL {
            if matches!(self.gate(stage)?, Gate::Pending | Gate::Resume) {
                return Ok(Some(stage));
            }
        }
        Ok(None)
    }

    fn snapshot_path(&self, stage: Stage) -> PathBuf {
        self.dir
            .join("snapshots")
            .join(format!("pre-{}.db", stage.name()))
    }

    /// Before `stage` runs: checks the gate before it is approved and copies
    /// `graph.db` to `snapshots/pre-<stage>.db`.
    pub fn begin(self, stage: Stage) -> Result<Self, ProjectError> {
        if let Some(waiting) = self.in_review()? {
            return Err(ProjectError::InReview {
                waiting,
                dir: self.dir.clone(),
            });
        }
        if self.gate(stage)? == Gate::Resume {
            // The stage goes on after an inner gate: a snapshot of this
            // point (what the gate passed kept) is what a failure restores.
            let dir = self.dir.clone();
            let snapshot = self.resume_path(stage);
            self.graph.close();
            copy_whole(&dir.join("graph.db"), &snapshot)?;
            return Self::open(&dir);
        }
        if self.gate(stage)? != Gate::Pending {
            return Err(ProjectError::AlreadyRan {
                stage,
                dir: self.dir.clone(),
            });
        }
        if let Some(next) = self.next_stage()?
            && next != stage
        {
            return Err(ProjectError::OutOfOrder { next, stage });
        }
        let dir = self.dir.clone();
        let db = dir.join("graph.db");
        let snapshot = self.snapshot_path(stage);
        self.graph.close();
        copy_whole(&db, &snapshot)?;
        Self::open(&dir)
    }

    /// The snapshot taken when a stage goes on after an inner gate.
    pub fn resume_path(&self, stage: Stage) -> PathBuf {
        self.dir
            .join("snapshots")
            .join(format!("pre-{}-resumed.db", stage.name()))
    }

    /// Whether `stage` goes on from an inner gate (FILL after its voice,
    /// DRESS after any of its three).
    pub fn resuming(&self, stage: Stage) -> Result<bool, ProjectError> {
        Ok(self.gate(stage)? == Gate::Resume)
    }

    /// The stage stops at its inner gate `waiting` for the author.
    pub fn pause(&mut self, stage: Stage, waiting: &str) -> Result<(), ProjectError> {
        let Some(gate) = inner_gates(stage).iter().find(|g| g.waiting == waiting) else {
            return Err(ProjectError::NoInnerGate {
                stage,
                waiting: waiting.to_owned(),
            });
        };
        self.set_gate(stage, gate.waiting, gate.waits)
    }

    /// After a stage ran: it waits for the author at its gate.
    pub fn finish(&mut self, stage: Stage) -> Result<(), ProjectError> {
        self.set_gate(stage, "review", "the stage ran; waiting for review")
    }

    /// The author approves the stage in review; the next may run.
    pub fn approve(&mut self) -> Result<Stage, ProjectError> {
        let Some(stage) = self.in_review()? else {
            return Err(ProjectError::NothingToApprove);
        };
        if let Some(gate) = self.waiting_inner(stage)? {
            if stage == Stage::Dress
                && gate.waiting == "briefs"
                && self.graph.meta(super::dress::BUDGET_KEY)?.is_none()
            {
                return Err(ProjectError::NoBudget {
                    dir: self.dir.clone(),
                });
            }
            self.set_gate(
                stage,
                gate.passed,
                &format!("{}: approved by the author", gate.waits),
            )?;
        } else {
            self.set_gate(stage, "approved", "approved by the author")?;
        }
        Ok(stage)
    }

    fn set_gate(&mut self, stage: Stage, value: &str, why: &str) -> Result<(), ProjectError> {
        self.graph.apply(
            stage,
            "gate",
            why,
            &[Mutation::Meta {
                key: format!("gate.{}", stage.name()),
                value: json!(value),
            }],
        )?;
        Ok(())
    }

    /// DRESS gate 2: the author's image budget (which briefs are drawn).
    pub fn set_budget(&mut self, budget: &super::dress::Budget) -> Result<(), ProjectError> {
        if self.waiting_inner(Stage::Dress)?.map(|g| g.waiting) != Some("briefs") {
            return Err(ProjectError::NotAtBudgetGate);
        }
        self.graph.apply(
            Stage::Dress,
            "gate",
            &format!("the author's image budget: {budget}"),
            &[Mutation::Meta {
                key: super::dress::BUDGET_KEY.into(),
                value: json!(budget.to_string()),
            }],
        )?;
        Ok(())
    }

    /// The author changes fields of a node at the gate of the stage under
    /// review, as that stage (its rules apply; the audit says `review`).
    /// Each field is `NAME=VALUE`, VALUE JSON or else text.
    pub fn edit(&mut self, id: &str, fields: &[String], why: &str) -> Result<Stage, ProjectError> {
        let Some(stage) = self.in_review()? else {
            return Err(ProjectError::NothingInReview);
        };
        let mut set = serde_json::Map::new();
        for field in fields {
            let Some((name, value)) = field.split_once('=') else {
                return Err(ProjectError::BadField {
                    field: field.clone(),
                });
            };
            let value = serde_json::from_str(value).unwrap_or_else(|_| json!(value));
            set.insert(name.trim().to_owned(), value);
        }
        self.graph.apply(
            stage,
            "review",
            why,
            &[Mutation::Update {
                id: id.to_owned(),
                fields: set,
            }],
        )?;
        Ok(stage)
    }

    /// Re-applies an edited `graph.yaml` at the gate: the differences from
    /// the graph, as the stage under review's changes, in one batch held
    /// to the same rules as the stage (nothing is written if one breaks
    /// them). Returns the stage and how many changes were made.
    pub fn apply_yaml(&mut self, file: &Path, why: &str) -> Result<(Stage, usize), ProjectError> {
        let Some(stage) = self.in_review()? else {
            return Err(ProjectError::NothingInReview);
        };
        let text = crate::files::read_to_string_within(file, GRAPH_YAML_CAP).map_err(io(file))?;
        let doc: Value = serde_norway::from_str(&text).map_err(|source| ProjectError::NotYaml {
            path: file.to_owned(),
            source,
        })?;
        let changes =
            super::review::changes(&self.graph, &doc).map_err(|source| ProjectError::Edited {
                path: file.to_owned(),
                source,
            })?;
        if !changes.is_empty() {
            self.graph.apply(stage, "review", why, &changes)?;
        }
        Ok((stage, changes.len()))
    }

    /// Restores `graph.db` to the snapshot taken before `stage` ran (byte
    /// for byte); later stages' snapshots go too, as they describe a graph
    /// that no longer exists.
    pub fn rollback(self, stage: Stage) -> Result<Self, ProjectError> {
        let snapshot = self.snapshot_path(stage);
        if !snapshot.is_file() {
            return Err(ProjectError::NotRun { stage, snapshot });
        }
        let dir = self.dir.clone();
        let db = dir.join("graph.db");
        self.graph.close();
        // The graph was open and closed cleanly, so any journal left beside
        // it is stale; it must not be played onto the restored file.
        let journal = dir.join("graph.db-journal");
        if journal.exists() {
            std::fs::remove_file(&journal).map_err(io(&journal))?;
        }
        copy_whole(&snapshot, &db)?;
        let project = Self::open(&dir)?;
        // Snapshots of graphs that no longer exist: later stages', and any
        // inner-gate point from this stage on.
        for s in Stage::ALL.into_iter().filter(|s| *s >= stage) {
            let mut gone = vec![project.resume_path(s)];
            if s > stage {
                gone.push(project.snapshot_path(s));
            }
            for path in gone.into_iter().filter(|p| p.is_file()) {
                std::fs::remove_file(&path).map_err(io(&path))?;
            }
        }
        Ok(project)
    }

    /// Undoes a run of `stage` that failed: the graph from before it (or,
    /// for a run going on after an inner gate, from that gate). Returns the
    /// snapshot restored.
    pub fn undo_run(self, stage: Stage, resumed: bool) -> Result<PathBuf, ProjectError> {
        if !resumed {
            let snapshot = self.snapshot_path(stage);
            self.rollback(stage)?;
            return Ok(snapshot);
        }
        let snapshot = self.resume_path(stage);
        let db = self.dir.join("graph.db");
        self.graph.close();
        copy_whole(&snapshot, &db)?;
        Ok(snapshot)
    }

    /// A few lines: the spark, each stage's gate, and what to do next.
    pub fn status(&self) -> Result<String, ProjectError> {
        let mut out = format!(
            "{}\n  spark: {}\n  scope: {}\n",
            self.dir.display(),
            self.spark()?,
            self.scope()?.name()
        );
        for stage in Stage::ALL {
            let gate = match self.gate(stage)? {
                Gate::Pending => "not run",
                Gate::Review => match self.waiting_inner(stage)? {
                    Some(g) => g.waits,
                    None => "run, waiting for review",
                },
                Gate::Approved => "approved",
                Gate::Resume => self.passed_inner(stage)?.map_or("going on", |g| g.next),
            };
            let _ = writeln!(out, "  {:<11} {gate}", stage.to_string());
        }
        let dir = self.dir.display();
        let next = match (self.in_review()?, self.next_stage()?) {
            (Some(stage), _) if self.waiting_inner(stage)?.map(|g| g.waiting) == Some("briefs") => {
                format!(
                    "next: review the briefs and the codex (`loreloom author review {dir}`), then choose the image budget: `loreloom author approve {dir} --render priority-2` (or none, priority-1, priority-3, top-N, all)"
                )
            }
            (Some(stage), _) => format!(
                "next: review {stage} (`loreloom author review {dir}`), then `loreloom author approve {dir}`"
            ),
            (None, Some(Stage::Ship)) => format!(
                "next: SHIP, its own command: `loreloom ship {dir} --format html` (or package, questfoundry, ink, twee, markdown, epub)"
            ),
            (None, Some(stage)) if stage > LAST_BUILT => format!(
                "next: {stage}, which this version of Loreloom does not have yet (the pipeline ends at {LAST_BUILT})"
            ),
            (None, Some(stage)) => format!(
                "next: run {stage} (`loreloom author run {dir} --to {}`)",
                stage.name()
            ),
            (None, None) => "every stage is approved".to_owned(),
        };
        out.push_str(&next);
        Ok(out)
    }
}
