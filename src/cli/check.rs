//! `loreloom validate` and `loreloom stats`.

use std::path::Path;
use std::process::ExitCode;

use crate::story::load::{LoadedFile, check_assets};
use crate::story::{Stats, load_file, validate_file};

/// Load a story file, or print why not.
fn load_or_report(path: &Path) -> Option<LoadedFile> {
    load_file(path)
        .map_err(|err| eprintln!("error: {err}"))
        .ok()
}

/// Print every problem and warning, one per line; the summary goes to stderr. Exit 1 on errors.
pub(super) fn validate(path: &Path) -> ExitCode {
    let Some(loaded) = load_or_report(path) else {
        return ExitCode::FAILURE;
    };
    let shown = loaded.path.display().to_string();
    let assets = check_assets(&loaded.file, &loaded.root);
    let (story, mut report) = validate_file(loaded.file);
    report.diagnostics.extend(loaded.notes);
    report.diagnostics.extend(assets);
    for diagnostic in &report.diagnostics {
        println!("{diagnostic}");
    }
    let (errors, warnings) = (report.errors(), report.warnings());
    eprintln!("{shown}: {errors} errors, {warnings} warnings");
    if story.is_none() {
        eprintln!("(reachability and the other checks run once these references are fixed)");
    }
    if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// SHIP: the story in `format`, written into `out`; refused (nothing
/// written) when validation finds errors.
pub(super) fn ship(path: &Path, format: crate::ship::Format, out: &Path) -> ExitCode {
    let Some(loaded) = load_or_report(path) else {
        return ExitCode::FAILURE;
    };
    let shown = loaded.path.display().to_string();
    // #43: an asset outside the story's folder is an error SHIP stops on.
    let outside: Vec<_> = check_assets(&loaded.file, &loaded.root)
        .into_iter()
        .filter(|d| d.severity == crate::story::Severity::Error)
        .collect();
    let (story, mut report) = validate_file(loaded.file);
    report.diagnostics.extend(outside);
    let Some(story) = story.filter(|_| report.errors() == 0) else {
        for d in report
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::story::Severity::Error)
        {
            eprintln!("{d}");
        }
        eprintln!(
            "{shown}: {} errors; SHIP writes only a story that validates (`loreloom validate {}`)",
            report.errors(),
            path.display()
        );
        return ExitCode::FAILURE;
    };
    match crate::ship::ship(story.file(), &loaded.root, format, out) {
        Ok((target, notes)) => {
            for note in notes {
                eprintln!("note: {note}");
            }
            println!("{}", target.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}

/// Print the story's counts, as JSON or as a table.
pub(super) fn stats(path: &Path, json: bool) -> ExitCode {
    let Some(loaded) = load_or_report(path) else {
        return ExitCode::FAILURE;
    };
    let shown = loaded.path.display().to_string();
    let (story, report) = validate_file(loaded.file);
    let (Some(story), Some(walk)) = (story, report.walk.as_ref()) else {
        eprintln!(
            "error: {shown}: the story has broken references; run `loreloom validate {}`",
            path.display()
        );
        return ExitCode::FAILURE;
    };
    if !walk.complete {
        eprintln!(
            "error: {shown}: too many codeword states to count what is reachable ({} explored)",
            walk.states
        );
        return ExitCode::FAILURE;
    }
    let stats = Stats::of(&story, walk);
    if json {
        match serde_json::to_string(&stats) {
            Ok(line) => println!("{line}"),
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        println!("{}", story.title());
        for (name, n) in [
            ("passages", stats.passages),
            ("choices", stats.choices),
            ("endings", stats.endings),
            ("codewords", stats.codewords),
            ("entities", stats.entities),
            ("codex entries", stats.codex_entries),
            ("illustrations", stats.illustrations),
            ("reachable passages", stats.reachable_passages),
            ("reachable endings", stats.reachable_endings),
        ] {
            println!("  {name:<20}{n}");
        }
    }
    ExitCode::SUCCESS
}
