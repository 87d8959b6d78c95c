//! Campaign validation findings: each names its file and, for JSON and YAML, its line.
//!
//! Files are named relative to the campaign.

use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::story::diagnostic::Severity;

/// One finding about one file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The file, relative to the campaign folder (`characters/npcs/ada/profile.json`).
    pub file: PathBuf,
    /// 1-based line, when the file is JSON or YAML and the problem has a place.
    pub line: Option<usize>,
    pub severity: Severity,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{level}: {}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every finding of one validation, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// Notes printed once for the whole campaign (seed 002 §6.2.11's generated-asset warning).
    pub notices: Vec<String>,
}

impl Report {
    pub fn error(
        &mut self,
        file: impl AsRef<Path>,
        line: Option<usize>,
        message: impl Into<String>,
    ) {
        self.push(file, line, Severity::Error, message);
    }

    pub fn warning(
        &mut self,
        file: impl AsRef<Path>,
        line: Option<usize>,
        message: impl Into<String>,
    ) {
        self.push(file, line, Severity::Warning, message);
    }

    fn push(
        &mut self,
        file: impl AsRef<Path>,
        line: Option<usize>,
        severity: Severity,
        message: impl Into<String>,
    ) {
        self.findings.push(Finding {
            file: file.as_ref().to_path_buf(),
            line,
            severity,
            message: message.into(),
        });
    }

    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
    }

    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }

    /// Sort by file, then line, errors before warnings; drop exact repeats.
    pub fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            (&a.file, a.line, a.severity, &a.message)
                .cmp(&(&b.file, b.line, b.severity, &b.message))
        });
        self.findings.dedup();
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{finding}")?;
        }
        for notice in &self.notices {
            writeln!(f, "warning: {notice}")?;
        }
        let errors = self.errors().count();
        let warnings = self.warnings().count() + self.notices.len();
        write!(
            f,
            "{errors} error{}, {warnings} warning{}",
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" }
        )
    }
}
